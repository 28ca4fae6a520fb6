;; Image passes of the nose-print extraction over f32 images (row-major, `width` x `height`), in
;; WebAssembly SIMD. Each pass does the same IEEE f64 operations, in the same order, as the JavaScript
;; loop it replaces (f32 loads widened to f64, every intermediate in f64, each result rounded to f32 once
;; when stored), and f64 arithmetic rounds identically in scalar code and in f64x2 lanes, so the results
;; are bit-identical. Pairs of outputs share an f64x2; where a row has an odd length the last pair's
;; second lane reads one value past the row (the caller leaves slack) and only its first lane is stored.
;; Helpers are written out in place: V8 does not inline calls between WebAssembly functions here.
;;
;; `rows`, `columns`: box filter passes of the blur. Each output is a running sum kept in f64, started
;; from zero over the clamped window and then moved one step at a time by adding (entering - leaving),
;; times `scale`. `columns` runs two columns per f64x2, `rows` two rows (one per lane).
;; `convolveRows`, `convolveColumns`: the exact-kernel blur, each output summing its taps in order from zero.
;; `gradients`: central differences, clamped at the border. `hessian`: scale-normalised determinant of the
;; Hessian, zero on the border. `normaliseContrast`: local contrast normalisation, one pixel at a time.
(module
  (memory (export "memory") 1)

  (func (export "columns") (param $src i32) (param $dst i32) (param $width i32) (param $height i32) (param $radius i32) (param $scale f64)
    (local $stride i32) (local $lastRow i32) (local $x i32) (local $k i32) (local $y i32)
    (local $column i32) (local $acc v128) (local $scales v128) (local $sum f64)
    (local.set $stride (i32.shl (local.get $width) (i32.const 2)))
    (local.set $lastRow (i32.sub (local.get $height) (i32.const 1)))
    (local.set $scales (f64x2.splat (local.get $scale)))
    (local.set $x (i32.const 0))
    (block $pairsDone
      (loop $pairs
        (br_if $pairsDone (i32.ge_s (i32.add (local.get $x) (i32.const 1)) (local.get $width)))
        (local.set $column (i32.shl (local.get $x) (i32.const 2)))
        (local.set $acc (f64x2.splat (f64.const 0)))
        (local.set $k (i32.sub (i32.const 0) (local.get $radius)))
        (block $windowDone
          (loop $window
            (br_if $windowDone (i32.gt_s (local.get $k) (local.get $radius)))
            (local.set $acc (f64x2.add (local.get $acc)
              (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (i32.add (local.get $src) (local.get $column))
                (i32.mul (select (i32.const 0) (select (local.get $lastRow) (local.get $k) (i32.gt_s (local.get $k) (local.get $lastRow))) (i32.lt_s (local.get $k) (i32.const 0))) (local.get $stride)))))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $window)))
        (local.set $y (i32.const 0))
        (block $downDone
          (loop $down
            (br_if $downDone (i32.ge_s (local.get $y) (local.get $height)))
            (v128.store64_lane 0
              (i32.add (i32.add (local.get $dst) (local.get $column)) (i32.mul (local.get $y) (local.get $stride)))
              (f32x4.demote_f64x2_zero (f64x2.mul (local.get $acc) (local.get $scales))))
            (local.set $acc (f64x2.add (local.get $acc)
              (f64x2.sub
                (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (i32.add (local.get $src) (local.get $column))
                  (i32.mul (select (i32.const 0) (select (local.get $lastRow) (i32.add (local.get $y) (i32.add (local.get $radius) (i32.const 1))) (i32.gt_s (i32.add (local.get $y) (i32.add (local.get $radius) (i32.const 1))) (local.get $lastRow))) (i32.lt_s (i32.add (local.get $y) (i32.add (local.get $radius) (i32.const 1))) (i32.const 0))) (local.get $stride)))))
                (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (i32.add (local.get $src) (local.get $column))
                  (i32.mul (select (i32.const 0) (select (local.get $lastRow) (i32.sub (local.get $y) (local.get $radius)) (i32.gt_s (i32.sub (local.get $y) (local.get $radius)) (local.get $lastRow))) (i32.lt_s (i32.sub (local.get $y) (local.get $radius)) (i32.const 0))) (local.get $stride))))))))
            (local.set $y (i32.add (local.get $y) (i32.const 1)))
            (br $down)))
        (local.set $x (i32.add (local.get $x) (i32.const 2)))
        (br $pairs)))
    ;; An odd width leaves one column: the same sums, one lane.
    (if (i32.lt_s (local.get $x) (local.get $width))
      (then
        (local.set $column (i32.add (local.get $src) (i32.shl (local.get $x) (i32.const 2))))
        (local.set $sum (f64.const 0))
        (local.set $k (i32.sub (i32.const 0) (local.get $radius)))
        (block $windowDone
          (loop $window
            (br_if $windowDone (i32.gt_s (local.get $k) (local.get $radius)))
            (local.set $sum (f64.add (local.get $sum) (f64.promote_f32 (f32.load
              (i32.add (local.get $column) (i32.mul (select (i32.const 0) (select (local.get $lastRow) (local.get $k) (i32.gt_s (local.get $k) (local.get $lastRow))) (i32.lt_s (local.get $k) (i32.const 0))) (local.get $stride)))))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $window)))
        (local.set $y (i32.const 0))
        (block $downDone
          (loop $down
            (br_if $downDone (i32.ge_s (local.get $y) (local.get $height)))
            (f32.store
              (i32.add (i32.add (local.get $dst) (i32.shl (local.get $x) (i32.const 2))) (i32.mul (local.get $y) (local.get $stride)))
              (f32.demote_f64 (f64.mul (local.get $sum) (local.get $scale))))
            (local.set $sum (f64.add (local.get $sum)
              (f64.sub
                (f64.promote_f32 (f32.load (i32.add (local.get $column)
                  (i32.mul (select (i32.const 0) (select (local.get $lastRow) (i32.add (local.get $y) (i32.add (local.get $radius) (i32.const 1))) (i32.gt_s (i32.add (local.get $y) (i32.add (local.get $radius) (i32.const 1))) (local.get $lastRow))) (i32.lt_s (i32.add (local.get $y) (i32.add (local.get $radius) (i32.const 1))) (i32.const 0))) (local.get $stride)))))
                (f64.promote_f32 (f32.load (i32.add (local.get $column)
                  (i32.mul (select (i32.const 0) (select (local.get $lastRow) (i32.sub (local.get $y) (local.get $radius)) (i32.gt_s (i32.sub (local.get $y) (local.get $radius)) (local.get $lastRow))) (i32.lt_s (i32.sub (local.get $y) (local.get $radius)) (i32.const 0))) (local.get $stride))))))))
            (local.set $y (i32.add (local.get $y) (i32.const 1)))
            (br $down))))))

  ;; Two rows at a time, one in each lane (an odd last row goes in both), so the two running sums advance together.
  (func (export "rows") (param $src i32) (param $dst i32) (param $width i32) (param $height i32) (param $radius i32) (param $scale f64)
    (local $last i32) (local $stride i32) (local $y i32) (local $rowA i32) (local $rowB i32) (local $outA i32) (local $outB i32)
    (local $k i32) (local $x i32) (local $at i32) (local $enter i32) (local $leave i32) (local $sums v128) (local $scales v128) (local $scaled v128)
    (local.set $last (i32.sub (local.get $width) (i32.const 1)))
    (local.set $stride (i32.shl (local.get $width) (i32.const 2)))
    (local.set $scales (f64x2.splat (local.get $scale)))
    (local.set $y (i32.const 0))
    (block $rowsDone
      (loop $rows
        (br_if $rowsDone (i32.ge_s (local.get $y) (local.get $height)))
        (local.set $rowA (i32.mul (local.get $y) (local.get $stride)))
        (local.set $rowB (select
          (i32.add (local.get $rowA) (local.get $stride)) (local.get $rowA)
          (i32.lt_s (i32.add (local.get $y) (i32.const 1)) (local.get $height))))
        (local.set $outA (i32.add (local.get $dst) (local.get $rowA)))
        (local.set $outB (i32.add (local.get $dst) (local.get $rowB)))
        (local.set $rowA (i32.add (local.get $src) (local.get $rowA)))
        (local.set $rowB (i32.add (local.get $src) (local.get $rowB)))
        (local.set $sums (f64x2.splat (f64.const 0)))
        (local.set $k (i32.sub (i32.const 0) (local.get $radius)))
        (block $windowDone
          (loop $window
            (br_if $windowDone (i32.gt_s (local.get $k) (local.get $radius)))
            (local.set $at (i32.shl
              (select (i32.const 0) (select (local.get $last) (local.get $k) (i32.gt_s (local.get $k) (local.get $last))) (i32.lt_s (local.get $k) (i32.const 0)))
              (i32.const 2)))
            (local.set $sums (f64x2.add (local.get $sums)
              (f64x2.replace_lane 1 (f64x2.splat (f64.promote_f32 (f32.load (i32.add (local.get $rowA) (local.get $at))))) (f64.promote_f32 (f32.load (i32.add (local.get $rowB) (local.get $at)))))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $window)))
        (local.set $x (i32.const 0))
        (block $alongDone
          (loop $along
            (br_if $alongDone (i32.ge_s (local.get $x) (local.get $width)))
            (local.set $scaled (f32x4.demote_f64x2_zero (f64x2.mul (local.get $sums) (local.get $scales))))
            (local.set $at (i32.shl (local.get $x) (i32.const 2)))
            (v128.store32_lane 0 (i32.add (local.get $outA) (local.get $at)) (local.get $scaled))
            (v128.store32_lane 1 (i32.add (local.get $outB) (local.get $at)) (local.get $scaled))
            (local.set $enter (i32.add (local.get $x) (i32.add (local.get $radius) (i32.const 1))))
            (local.set $enter (i32.shl (select (local.get $last) (local.get $enter) (i32.gt_s (local.get $enter) (local.get $last))) (i32.const 2)))
            (local.set $leave (i32.sub (local.get $x) (local.get $radius)))
            (local.set $leave (i32.shl (select (i32.const 0) (local.get $leave) (i32.lt_s (local.get $leave) (i32.const 0))) (i32.const 2)))
            (local.set $sums (f64x2.add (local.get $sums)
              (f64x2.sub
                (f64x2.replace_lane 1 (f64x2.splat (f64.promote_f32 (f32.load (i32.add (local.get $rowA) (local.get $enter))))) (f64.promote_f32 (f32.load (i32.add (local.get $rowB) (local.get $enter)))))
                (f64x2.replace_lane 1 (f64x2.splat (f64.promote_f32 (f32.load (i32.add (local.get $rowA) (local.get $leave))))) (f64.promote_f32 (f32.load (i32.add (local.get $rowB) (local.get $leave))))))))
            (local.set $x (i32.add (local.get $x) (i32.const 1)))
            (br $along)))
        (local.set $y (i32.add (local.get $y) (i32.const 2)))
        (br $rows))))
  ;; `padded` is scratch for one row plus the kernel's reach on both sides (and one value of slack).
  (func (export "convolveRows") (param $src i32) (param $dst i32) (param $padded i32) (param $kernel i32) (param $taps i32) (param $width i32) (param $height i32)
    (local $narrow v128)
    (local $radius i32) (local $stride i32) (local $y i32) (local $row i32) (local $i i32) (local $x i32) (local $k i32) (local $acc v128)
    (local.set $radius (i32.shr_u (i32.sub (local.get $taps) (i32.const 1)) (i32.const 1)))
    (local.set $stride (i32.shl (local.get $width) (i32.const 2)))
    (local.set $y (i32.const 0))
    (block $rowsDone
      (loop $rows
        (br_if $rowsDone (i32.ge_s (local.get $y) (local.get $height)))
        (local.set $row (i32.add (local.get $src) (i32.mul (local.get $y) (local.get $stride))))
        (local.set $i (i32.const 0))
        (block $edgesDone
          (loop $edges
            (br_if $edgesDone (i32.ge_s (local.get $i) (local.get $radius)))
            (f32.store (i32.add (local.get $padded) (i32.shl (local.get $i) (i32.const 2))) (f32.load (local.get $row)))
            (f32.store (i32.add (local.get $padded) (i32.shl (i32.add (i32.add (local.get $radius) (local.get $width)) (local.get $i)) (i32.const 2)))
              (f32.load (i32.add (local.get $row) (i32.sub (local.get $stride) (i32.const 4)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $edges)))
        (memory.copy (i32.add (local.get $padded) (i32.shl (local.get $radius) (i32.const 2))) (local.get $row) (local.get $stride))
        (local.set $x (i32.const 0))
        (block $alongDone
          (loop $along
            (br_if $alongDone (i32.ge_s (local.get $x) (local.get $width)))
            (local.set $acc (f64x2.splat (f64.const 0)))
            (local.set $k (i32.const 0))
            (block $tapsDone
              (loop $tapsLoop
                (br_if $tapsDone (i32.ge_s (local.get $k) (local.get $taps)))
                (local.set $acc (f64x2.add (local.get $acc) (f64x2.mul
                  (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $padded) (i32.shl (i32.add (local.get $x) (local.get $k)) (i32.const 2)))))
                  (f64x2.splat (f64.promote_f32 (f32.load (i32.add (local.get $kernel) (i32.shl (local.get $k) (i32.const 2)))))))))
                (local.set $k (i32.add (local.get $k) (i32.const 1)))
                (br $tapsLoop)))
            (local.set $narrow (f32x4.demote_f64x2_zero (local.get $acc)))
            (if (i32.lt_s (i32.add (local.get $x) (i32.const 1)) (local.get $width))
              (then (v128.store64_lane 0 (i32.add (i32.add (local.get $dst) (i32.mul (local.get $y) (local.get $stride))) (i32.shl (local.get $x) (i32.const 2))) (local.get $narrow)))
              (else (v128.store32_lane 0 (i32.add (i32.add (local.get $dst) (i32.mul (local.get $y) (local.get $stride))) (i32.shl (local.get $x) (i32.const 2))) (local.get $narrow))))
            (local.set $x (i32.add (local.get $x) (i32.const 2)))
            (br $along)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $rows))))

  (func (export "convolveColumns") (param $src i32) (param $dst i32) (param $kernel i32) (param $taps i32) (param $width i32) (param $height i32)
    (local $narrow v128)
    (local $radius i32) (local $stride i32) (local $lastRow i32) (local $y i32) (local $x i32) (local $k i32) (local $r i32) (local $acc v128)
    (local.set $radius (i32.shr_u (i32.sub (local.get $taps) (i32.const 1)) (i32.const 1)))
    (local.set $stride (i32.shl (local.get $width) (i32.const 2)))
    (local.set $lastRow (i32.sub (local.get $height) (i32.const 1)))
    (local.set $y (i32.const 0))
    (block $rowsDone
      (loop $rows
        (br_if $rowsDone (i32.ge_s (local.get $y) (local.get $height)))
        (local.set $x (i32.const 0))
        (block $alongDone
          (loop $along
            (br_if $alongDone (i32.ge_s (local.get $x) (local.get $width)))
            (local.set $acc (f64x2.splat (f64.const 0)))
            (local.set $k (i32.const 0))
            (block $tapsDone
              (loop $tapsLoop
                (br_if $tapsDone (i32.ge_s (local.get $k) (local.get $taps)))
                (local.set $r (i32.sub (i32.add (local.get $y) (local.get $k)) (local.get $radius)))
                (local.set $r (select (i32.const 0) (select (local.get $lastRow) (local.get $r) (i32.gt_s (local.get $r) (local.get $lastRow))) (i32.lt_s (local.get $r) (i32.const 0))))
                (local.set $acc (f64x2.add (local.get $acc) (f64x2.mul
                  (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (i32.add (local.get $src) (i32.mul (local.get $r) (local.get $stride))) (i32.shl (local.get $x) (i32.const 2)))))
                  (f64x2.splat (f64.promote_f32 (f32.load (i32.add (local.get $kernel) (i32.shl (local.get $k) (i32.const 2)))))))))
                (local.set $k (i32.add (local.get $k) (i32.const 1)))
                (br $tapsLoop)))
            (local.set $narrow (f32x4.demote_f64x2_zero (local.get $acc)))
            (if (i32.lt_s (i32.add (local.get $x) (i32.const 1)) (local.get $width))
              (then (v128.store64_lane 0 (i32.add (i32.add (local.get $dst) (i32.mul (local.get $y) (local.get $stride))) (i32.shl (local.get $x) (i32.const 2))) (local.get $narrow)))
              (else (v128.store32_lane 0 (i32.add (i32.add (local.get $dst) (i32.mul (local.get $y) (local.get $stride))) (i32.shl (local.get $x) (i32.const 2))) (local.get $narrow))))
            (local.set $x (i32.add (local.get $x) (i32.const 2)))
            (br $along)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $rows))))

  ;; gx = (right - left) * 0.5 and gy = (down - up) * 0.5, neighbours clamped to the image.
  (func (export "gradients") (param $src i32) (param $gx i32) (param $gy i32) (param $width i32) (param $height i32)
    (local $narrow v128)
    (local $stride i32) (local $y i32) (local $row i32) (local $up i32) (local $down i32) (local $x i32) (local $at i32)
    (local $left i32) (local $right i32) (local $both i32) (local $halves v128) (local $lefts v128) (local $rights v128)
    (local.set $stride (i32.shl (local.get $width) (i32.const 2)))
    (local.set $halves (f64x2.splat (f64.const 0.5)))
    (local.set $y (i32.const 0))
    (block $rowsDone
      (loop $rows
        (br_if $rowsDone (i32.ge_s (local.get $y) (local.get $height)))
        (local.set $row (i32.mul (local.get $y) (local.get $stride)))
        (local.set $up (select (i32.sub (local.get $row) (local.get $stride)) (local.get $row) (i32.gt_s (local.get $y) (i32.const 0))))
        (local.set $down (select (i32.add (local.get $row) (local.get $stride)) (local.get $row)
          (i32.lt_s (local.get $y) (i32.sub (local.get $height) (i32.const 1)))))
        (local.set $x (i32.const 0))
        (block $alongDone
          (loop $along
            (br_if $alongDone (i32.ge_s (local.get $x) (local.get $width)))
            (local.set $at (i32.shl (local.get $x) (i32.const 2)))
            (local.set $both (i32.lt_s (i32.add (local.get $x) (i32.const 1)) (local.get $width)))
            (local.set $narrow (f32x4.demote_f64x2_zero (f64x2.mul (f64x2.sub
                (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (i32.add (local.get $src) (local.get $down)) (local.get $at))))
                (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (i32.add (local.get $src) (local.get $up)) (local.get $at)))))
                (local.get $halves))))
            (if (local.get $both)
              (then (v128.store64_lane 0 (i32.add (i32.add (local.get $gy) (local.get $row)) (local.get $at)) (local.get $narrow)))
              (else (v128.store32_lane 0 (i32.add (i32.add (local.get $gy) (local.get $row)) (local.get $at)) (local.get $narrow))))
            ;; The pair's left neighbours are x - 1 and x, its right neighbours x + 1 and x + 2; away from
            ;; the first and last columns they are two adjacent pairs, at the edges each is clamped.
            (local.set $left (i32.add (i32.add (local.get $src) (local.get $row)) (local.get $at)))
            (local.set $right (i32.add (local.get $left) (i32.const 4)))
            (if (i32.and (i32.gt_s (local.get $x) (i32.const 0)) (i32.lt_s (i32.add (local.get $x) (i32.const 2)) (local.get $width)))
              (then
                (local.set $rights (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $right))))
                (local.set $lefts (f64x2.promote_low_f32x4 (v128.load64_zero (i32.sub (local.get $left) (i32.const 4))))))
              (else
                (local.set $rights (f64x2.replace_lane 1
                  (f64x2.splat (f64.promote_f32 (f32.load (select (local.get $right) (local.get $left) (i32.lt_s (i32.add (local.get $x) (i32.const 1)) (local.get $width))))))
                  (f64.promote_f32 (f32.load (select (i32.add (local.get $right) (i32.const 4)) (local.get $right)
                    (i32.lt_s (i32.add (local.get $x) (i32.const 2)) (local.get $width)))))))
                (local.set $lefts (f64x2.replace_lane 1
                  (f64x2.splat (f64.promote_f32 (f32.load (select (i32.sub (local.get $left) (i32.const 4)) (local.get $left) (i32.gt_s (local.get $x) (i32.const 0))))))
                  (f64.promote_f32 (f32.load (local.get $left)))))))
            (local.set $narrow (f32x4.demote_f64x2_zero (f64x2.mul (f64x2.sub (local.get $rights) (local.get $lefts)) (local.get $halves))))
            (if (local.get $both)
              (then (v128.store64_lane 0 (i32.add (i32.add (local.get $gx) (local.get $row)) (local.get $at)) (local.get $narrow)))
              (else (v128.store32_lane 0 (i32.add (i32.add (local.get $gx) (local.get $row)) (local.get $at)) (local.get $narrow))))
            (local.set $x (i32.add (local.get $x) (i32.const 2)))
            (br $along)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $rows))))

  ;; (dxx * dyy - dxy * dxy) * norm inside a one-pixel border, zero on it.
  (func (export "hessian") (param $src i32) (param $out i32) (param $width i32) (param $height i32) (param $norm f64)
    (local $narrow v128)
    (local $stride i32) (local $y i32) (local $x i32) (local $i i32) (local $centre2 v128) (local $dxx v128) (local $dyy v128) (local $dxy v128)
    (local $norms v128)
    (local.set $stride (i32.shl (local.get $width) (i32.const 2)))
    (local.set $norms (f64x2.splat (local.get $norm)))
    (memory.fill (local.get $out) (i32.const 0) (i32.mul (local.get $stride) (local.get $height)))
    (local.set $y (i32.const 1))
    (block $rowsDone
      (loop $rows
        (br_if $rowsDone (i32.ge_s (local.get $y) (i32.sub (local.get $height) (i32.const 1))))
        (local.set $x (i32.const 1))
        (block $alongDone
          (loop $along
            (br_if $alongDone (i32.ge_s (local.get $x) (i32.sub (local.get $width) (i32.const 1))))
            (local.set $i (i32.add (local.get $src) (i32.shl (i32.add (i32.mul (local.get $y) (local.get $width)) (local.get $x)) (i32.const 2))))
            (local.set $centre2 (f64x2.mul (f64x2.splat (f64.const 2))
              (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $i)))))
            (local.set $dxx (f64x2.add
              (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $i) (i32.const 4)))) (local.get $centre2))
              (f64x2.promote_low_f32x4 (v128.load64_zero (i32.sub (local.get $i) (i32.const 4))))))
            (local.set $dyy (f64x2.add
              (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $i) (local.get $stride)))) (local.get $centre2))
              (f64x2.promote_low_f32x4 (v128.load64_zero (i32.sub (local.get $i) (local.get $stride))))))
            (local.set $dxy (f64x2.mul
              (f64x2.add
                (f64x2.sub
                  (f64x2.sub
                    (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $i) (i32.add (local.get $stride) (i32.const 4)))))
                    (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $i) (i32.sub (local.get $stride) (i32.const 4))))))
                  (f64x2.promote_low_f32x4 (v128.load64_zero (i32.sub (local.get $i) (i32.sub (local.get $stride) (i32.const 4))))))
                (f64x2.promote_low_f32x4 (v128.load64_zero (i32.sub (local.get $i) (i32.add (local.get $stride) (i32.const 4))))))
              (f64x2.splat (f64.const 0.25))))
            (local.set $narrow (f32x4.demote_f64x2_zero (f64x2.mul (f64x2.sub (f64x2.mul (local.get $dxx) (local.get $dyy)) (f64x2.mul (local.get $dxy) (local.get $dxy))) (local.get $norms))))
            (if (i32.lt_s (i32.add (local.get $x) (i32.const 1)) (i32.sub (local.get $width) (i32.const 1)))
              (then (v128.store64_lane 0 (i32.add (local.get $out) (i32.sub (local.get $i) (local.get $src))) (local.get $narrow)))
              (else (v128.store32_lane 0 (i32.add (local.get $out) (i32.sub (local.get $i) (local.get $src))) (local.get $narrow))))
            (local.set $x (i32.add (local.get $x) (i32.const 2)))
            (br $along)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $rows))))

  ;; Local contrast normalisation (enhance.ts): summed-area tables of the values and of their squares in
  ;; f64, each with a zero first row and column, then per pixel (v - mean) / sqrt(std^2 + minVariance) over
  ;; the window of `radius` clamped to the image, limited to [-3, 3].
  (func (export "normaliseContrast") (param $src i32) (param $dst i32) (param $sums i32) (param $squares i32)
    (param $width i32) (param $height i32) (param $radius i32) (param $minVariance f64)
    (local $stride i32) (local $y i32) (local $x i32) (local $v f64) (local $rowSum f64) (local $rowSquares f64)
    (local $above i32) (local $at i32) (local $y0 i32) (local $y1 i32) (local $x0 i32) (local $x1 i32) (local $n f64)
    (local $a i32) (local $b i32) (local $c i32) (local $d i32) (local $s f64) (local $s2 f64) (local $mean f64) (local $std f64)
    (local.set $stride (i32.shl (i32.add (local.get $width) (i32.const 1)) (i32.const 3)))
    (memory.fill (local.get $sums) (i32.const 0) (local.get $stride))
    (memory.fill (local.get $squares) (i32.const 0) (local.get $stride))
    (local.set $y (i32.const 0))
    (block $tablesDone
      (loop $tables
        (br_if $tablesDone (i32.ge_s (local.get $y) (local.get $height)))
        (local.set $rowSum (f64.const 0))
        (local.set $rowSquares (f64.const 0))
        (local.set $above (i32.mul (local.get $y) (local.get $stride)))
        (f64.store (i32.add (local.get $sums) (i32.add (local.get $above) (local.get $stride))) (f64.const 0))
        (f64.store (i32.add (local.get $squares) (i32.add (local.get $above) (local.get $stride))) (f64.const 0))
        (local.set $x (i32.const 0))
        (block $rowDone
          (loop $row
            (br_if $rowDone (i32.ge_s (local.get $x) (local.get $width)))
            (local.set $v (f64.promote_f32 (f32.load (i32.add (local.get $src)
              (i32.shl (i32.add (i32.mul (local.get $y) (local.get $width)) (local.get $x)) (i32.const 2))))))
            (local.set $rowSum (f64.add (local.get $rowSum) (local.get $v)))
            (local.set $rowSquares (f64.add (local.get $rowSquares) (f64.mul (local.get $v) (local.get $v))))
            (local.set $at (i32.add (local.get $above) (i32.shl (i32.add (local.get $x) (i32.const 1)) (i32.const 3))))
            (f64.store (i32.add (local.get $sums) (i32.add (local.get $at) (local.get $stride)))
              (f64.add (f64.load (i32.add (local.get $sums) (local.get $at))) (local.get $rowSum)))
            (f64.store (i32.add (local.get $squares) (i32.add (local.get $at) (local.get $stride)))
              (f64.add (f64.load (i32.add (local.get $squares) (local.get $at))) (local.get $rowSquares)))
            (local.set $x (i32.add (local.get $x) (i32.const 1)))
            (br $row)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $tables)))
    (local.set $y (i32.const 0))
    (block $rowsDone
      (loop $rows
        (br_if $rowsDone (i32.ge_s (local.get $y) (local.get $height)))
        (local.set $y0 (i32.sub (local.get $y) (local.get $radius)))
        (local.set $y0 (select (i32.const 0) (local.get $y0) (i32.lt_s (local.get $y0) (i32.const 0))))
        (local.set $y1 (i32.add (local.get $y) (i32.add (local.get $radius) (i32.const 1))))
        (local.set $y1 (select (local.get $height) (local.get $y1) (i32.gt_s (local.get $y1) (local.get $height))))
        (local.set $x (i32.const 0))
        (block $alongDone
          (loop $along
            (br_if $alongDone (i32.ge_s (local.get $x) (local.get $width)))
            (local.set $x0 (i32.sub (local.get $x) (local.get $radius)))
            (local.set $x0 (select (i32.const 0) (local.get $x0) (i32.lt_s (local.get $x0) (i32.const 0))))
            (local.set $x1 (i32.add (local.get $x) (i32.add (local.get $radius) (i32.const 1))))
            (local.set $x1 (select (local.get $width) (local.get $x1) (i32.gt_s (local.get $x1) (local.get $width))))
            (local.set $n (f64.convert_i32_s (i32.mul (i32.sub (local.get $y1) (local.get $y0)) (i32.sub (local.get $x1) (local.get $x0)))))
            (local.set $a (i32.add (i32.mul (local.get $y1) (local.get $stride)) (i32.shl (local.get $x1) (i32.const 3))))
            (local.set $b (i32.add (i32.mul (local.get $y0) (local.get $stride)) (i32.shl (local.get $x1) (i32.const 3))))
            (local.set $c (i32.add (i32.mul (local.get $y1) (local.get $stride)) (i32.shl (local.get $x0) (i32.const 3))))
            (local.set $d (i32.add (i32.mul (local.get $y0) (local.get $stride)) (i32.shl (local.get $x0) (i32.const 3))))
            (local.set $s (f64.add (f64.sub (f64.sub
              (f64.load (i32.add (local.get $sums) (local.get $a))) (f64.load (i32.add (local.get $sums) (local.get $b))))
              (f64.load (i32.add (local.get $sums) (local.get $c)))) (f64.load (i32.add (local.get $sums) (local.get $d)))))
            (local.set $s2 (f64.add (f64.sub (f64.sub
              (f64.load (i32.add (local.get $squares) (local.get $a))) (f64.load (i32.add (local.get $squares) (local.get $b))))
              (f64.load (i32.add (local.get $squares) (local.get $c)))) (f64.load (i32.add (local.get $squares) (local.get $d)))))
            (local.set $mean (f64.div (local.get $s) (local.get $n)))
            (local.set $std (f64.sqrt (f64.max (f64.const 0)
              (f64.sub (f64.div (local.get $s2) (local.get $n)) (f64.mul (local.get $mean) (local.get $mean))))))
            (local.set $at (i32.shl (i32.add (i32.mul (local.get $y) (local.get $width)) (local.get $x)) (i32.const 2)))
            (local.set $v (f64.div
              (f64.sub (f64.promote_f32 (f32.load (i32.add (local.get $src) (local.get $at)))) (local.get $mean))
              (f64.sqrt (f64.add (f64.mul (local.get $std) (local.get $std)) (local.get $minVariance)))))
            (f32.store (i32.add (local.get $dst) (local.get $at))
              (f32.demote_f64 (select (f64.const 3)
                (select (f64.const -3) (local.get $v) (f64.lt (local.get $v) (f64.const -3)))
                (f64.gt (local.get $v) (f64.const 3)))))
            (local.set $x (i32.add (local.get $x) (i32.const 1)))
            (br $along)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $rows))))
)
