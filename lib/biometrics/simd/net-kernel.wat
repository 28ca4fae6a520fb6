;; The learned descriptor's layers (descriptor-net.ts) in WebAssembly SIMD, float32. Activations are stored pixel
;; by pixel with the channels innermost; weights with the outputs innermost (conv [ky][kx][in][out], linear
;; [in][out]), so each input value, splatted, multiplies 8 consecutive outputs' weights held in two vectors.
;; Output counts must be multiples of 8. The sums run in the same order as descriptor-net.ts's scalar loops
;; (bias, then taps row by row, inputs in order), without fused multiply-add, so results match them closely.
(module
  (memory (export "memory") 1)

  ;; 3 x 3 convolution, padding 1, stride 1 or 2, optional ReLU: input size x size x cin at pin, weights at pw,
  ;; biases at pb, output ceil(size / stride)^2 x cout at pout.
  (func (export "conv3x3") (param $pin i32) (param $size i32) (param $cin i32) (param $pw i32) (param $pb i32)
    (param $cout i32) (param $stride i32) (param $relu i32) (param $pout i32)
    (local $outSize i32) (local $oy i32) (local $ox i32) (local $ob i32) (local $ky i32) (local $kx i32)
    (local $iy i32) (local $ix i32) (local $c i32) (local $pixel i32) (local $w i32) (local $o i32)
    (local $v v128) (local $acc0 v128) (local $acc1 v128) (local $rowBytes i32)
    (local.set $outSize (i32.div_u (i32.add (local.get $size) (i32.sub (local.get $stride) (i32.const 1))) (local.get $stride)))
    (local.set $rowBytes (i32.shl (local.get $cout) (i32.const 2)))
    (local.set $o (local.get $pout))
    (local.set $oy (i32.const 0))
    (loop $rows
      (local.set $ox (i32.const 0))
      (loop $cols
        (local.set $ob (i32.const 0))
        (loop $blocks
          (local.set $acc0 (v128.load (i32.add (local.get $pb) (i32.shl (local.get $ob) (i32.const 2)))))
          (local.set $acc1 (v128.load offset=16 (i32.add (local.get $pb) (i32.shl (local.get $ob) (i32.const 2)))))
          (local.set $ky (i32.const 0))
          (loop $taprows
            (local.set $iy (i32.sub (i32.add (i32.mul (local.get $oy) (local.get $stride)) (local.get $ky)) (i32.const 1)))
            (if (i32.lt_u (local.get $iy) (local.get $size))
              (then
                (local.set $kx (i32.const 0))
                (loop $tapcols
                  (local.set $ix (i32.sub (i32.add (i32.mul (local.get $ox) (local.get $stride)) (local.get $kx)) (i32.const 1)))
                  (if (i32.lt_u (local.get $ix) (local.get $size))
                    (then
                      ;; input pixel (iy, ix), channel 0; weights of tap (ky, kx), input 0, output ob
                      (local.set $pixel (i32.add (local.get $pin)
                        (i32.shl (i32.mul (i32.add (i32.mul (local.get $iy) (local.get $size)) (local.get $ix)) (local.get $cin)) (i32.const 2))))
                      (local.set $w (i32.add (local.get $pw)
                        (i32.shl (i32.add (i32.mul (i32.mul (i32.add (i32.mul (local.get $ky) (i32.const 3)) (local.get $kx)) (local.get $cin)) (local.get $cout))
                          (local.get $ob)) (i32.const 2))))
                      (local.set $c (i32.const 0))
                      (loop $inputs
                        (local.set $v (f32x4.splat (f32.load (i32.add (local.get $pixel) (i32.shl (local.get $c) (i32.const 2))))))
                        (local.set $acc0 (f32x4.add (local.get $acc0) (f32x4.mul (v128.load (local.get $w)) (local.get $v))))
                        (local.set $acc1 (f32x4.add (local.get $acc1) (f32x4.mul (v128.load offset=16 (local.get $w)) (local.get $v))))
                        (local.set $w (i32.add (local.get $w) (local.get $rowBytes)))
                        (local.set $c (i32.add (local.get $c) (i32.const 1)))
                        (br_if $inputs (i32.lt_u (local.get $c) (local.get $cin))))))
                  (local.set $kx (i32.add (local.get $kx) (i32.const 1)))
                  (br_if $tapcols (i32.lt_u (local.get $kx) (i32.const 3))))))
            (local.set $ky (i32.add (local.get $ky) (i32.const 1)))
            (br_if $taprows (i32.lt_u (local.get $ky) (i32.const 3))))
          (if (local.get $relu)
            (then
              (local.set $acc0 (f32x4.max (local.get $acc0) (v128.const f32x4 0 0 0 0)))
              (local.set $acc1 (f32x4.max (local.get $acc1) (v128.const f32x4 0 0 0 0)))))
          (v128.store (local.get $o) (local.get $acc0))
          (v128.store offset=16 (local.get $o) (local.get $acc1))
          (local.set $o (i32.add (local.get $o) (i32.const 32)))
          (local.set $ob (i32.add (local.get $ob) (i32.const 8)))
          (br_if $blocks (i32.lt_u (local.get $ob) (local.get $cout))))
        (local.set $ox (i32.add (local.get $ox) (i32.const 1)))
        (br_if $cols (i32.lt_u (local.get $ox) (local.get $outSize))))
      (local.set $oy (i32.add (local.get $oy) (i32.const 1)))
      (br_if $rows (i32.lt_u (local.get $oy) (local.get $outSize)))))

  ;; Fully connected layer, optional ReLU: n inputs at pin, weights at pw ([in][out]), biases at pb, nout outputs at pout.
  (func (export "linear") (param $pin i32) (param $n i32) (param $pw i32) (param $pb i32) (param $nout i32)
    (param $relu i32) (param $pout i32)
    (local $ob i32) (local $i i32) (local $w i32) (local $v v128) (local $acc0 v128) (local $acc1 v128) (local $rowBytes i32)
    (local.set $rowBytes (i32.shl (local.get $nout) (i32.const 2)))
    (local.set $ob (i32.const 0))
    (loop $blocks
      (local.set $acc0 (v128.load (i32.add (local.get $pb) (i32.shl (local.get $ob) (i32.const 2)))))
      (local.set $acc1 (v128.load offset=16 (i32.add (local.get $pb) (i32.shl (local.get $ob) (i32.const 2)))))
      (local.set $w (i32.add (local.get $pw) (i32.shl (local.get $ob) (i32.const 2))))
      (local.set $i (i32.const 0))
      (loop $inputs
        (local.set $v (f32x4.splat (f32.load (i32.add (local.get $pin) (i32.shl (local.get $i) (i32.const 2))))))
        (local.set $acc0 (f32x4.add (local.get $acc0) (f32x4.mul (v128.load (local.get $w)) (local.get $v))))
        (local.set $acc1 (f32x4.add (local.get $acc1) (f32x4.mul (v128.load offset=16 (local.get $w)) (local.get $v))))
        (local.set $w (i32.add (local.get $w) (local.get $rowBytes)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $inputs (i32.lt_u (local.get $i) (local.get $n))))
      (if (local.get $relu)
        (then
          (local.set $acc0 (f32x4.max (local.get $acc0) (v128.const f32x4 0 0 0 0)))
          (local.set $acc1 (f32x4.max (local.get $acc1) (v128.const f32x4 0 0 0 0)))))
      (v128.store (i32.add (local.get $pout) (i32.shl (local.get $ob) (i32.const 2))) (local.get $acc0))
      (v128.store offset=16 (i32.add (local.get $pout) (i32.shl (local.get $ob) (i32.const 2))) (local.get $acc1))
      (local.set $ob (i32.add (local.get $ob) (i32.const 8)))
      (br_if $blocks (i32.lt_u (local.get $ob) (local.get $nout))))))
