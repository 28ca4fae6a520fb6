;; Dot products of int8 descriptors (WebAssembly SIMD); every vector is `dims` bytes, dims a multiple of 16.
;; `matrix` writes the na x nb dot products (i32, row-major) of the descriptors at `pa` and `pb` to `out`.
;; `dots` writes the dot product of one query (at `pq`) with each of `n` vectors (at `pv`) as i32 at `out`.
;; int8 x int8 products fit in i16, pairwise sums in i32, so the result equals the scalar loop exactly.
(module
  (memory (export "memory") 1)
  (func $dot (param $pa i32) (param $pb i32) (param $dims i32) (result i32)
    (local $acc v128) (local $i i32) (local $va v128) (local $vb v128)
    (local.set $acc (v128.const i32x4 0 0 0 0))
    (local.set $i (i32.const 0))
    (block $done
      (loop $chunk
        (br_if $done (i32.ge_u (local.get $i) (local.get $dims)))
        (local.set $va (v128.load (i32.add (local.get $pa) (local.get $i))))
        (local.set $vb (v128.load (i32.add (local.get $pb) (local.get $i))))
        (local.set $acc (i32x4.add (local.get $acc)
          (i32x4.extadd_pairwise_i16x8_s (i16x8.extmul_low_i8x16_s (local.get $va) (local.get $vb)))))
        (local.set $acc (i32x4.add (local.get $acc)
          (i32x4.extadd_pairwise_i16x8_s (i16x8.extmul_high_i8x16_s (local.get $va) (local.get $vb)))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $chunk)))
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
      (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))

  (func $dotsInto (export "dots") (param $pq i32) (param $pv i32) (param $n i32) (param $dims i32) (param $out i32)
    (local $j i32)
    (local.set $j (i32.const 0))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
        (i32.store
          (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2)))
          (call $dot (local.get $pq) (i32.add (local.get $pv) (i32.mul (local.get $j) (local.get $dims))) (local.get $dims)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $each))))
  (func (export "matrix") (param $pa i32) (param $na i32) (param $pb i32) (param $nb i32) (param $dims i32) (param $out i32)
    (local $i i32)
    (local.set $i (i32.const 0))
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $i) (local.get $na)))
        (call $dotsInto
          (i32.add (local.get $pa) (i32.mul (local.get $i) (local.get $dims)))
          (local.get $pb) (local.get $nb) (local.get $dims)
          (i32.add (local.get $out) (i32.shl (i32.mul (local.get $i) (local.get $nb)) (i32.const 2))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $row)))))
