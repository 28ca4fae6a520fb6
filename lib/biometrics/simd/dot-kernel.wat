;; Dot products of int8 descriptors (WebAssembly SIMD); every vector is `dims` bytes, dims a multiple of 16.
;; Descriptors are first widened to int16 (`widen`), so that one i32x4.dot_i16x8_s (x86 pmaddwd) multiplies
;; and pairs 8 components: int8 x int8 products and their pairwise sums fit in i32, so every result equals
;; the scalar loop exactly, for any int8 values. One row of a is taken against four rows of b at a time
;; (`$dot4`), sharing the loads of a and the horizontal sums.
;; `matrix` writes the na x nb dot products (i32, row-major) of the widened descriptors at `pa` and `pb`.
;; `nearest` writes, without storing the matrix, what mutual nearest-neighbour matching needs of it.
(module
  (memory (export "memory") 1)

  ;; n int8 values (n a multiple of 16) at src as int16 at dst.
  (func (export "widen") (param $src i32) (param $n i32) (param $dst i32)
    (local $k i32) (local $v v128)
    (local.set $k (i32.const 0))
    (block $done
      (loop $chunk
        (br_if $done (i32.ge_u (local.get $k) (local.get $n)))
        (local.set $v (v128.load (i32.add (local.get $src) (local.get $k))))
        (v128.store (i32.add (local.get $dst) (i32.shl (local.get $k) (i32.const 1))) (i16x8.extend_low_i8x16_s (local.get $v)))
        (v128.store offset=16 (i32.add (local.get $dst) (i32.shl (local.get $k) (i32.const 1))) (i16x8.extend_high_i8x16_s (local.get $v)))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $chunk))))

  ;; Dot products of the widened row at pa with the 4 widened rows at pb, pb + stride, ...; `bytes` = 2 x dims.
  (func $dot4 (param $pa i32) (param $pb i32) (param $stride i32) (param $bytes i32) (result v128)
    (local $k i32) (local $va v128) (local $pb1 i32) (local $pb2 i32) (local $pb3 i32)
    (local $acc0 v128) (local $acc1 v128) (local $acc2 v128) (local $acc3 v128)
    (local.set $pb1 (i32.add (local.get $pb) (local.get $stride)))
    (local.set $pb2 (i32.add (local.get $pb1) (local.get $stride)))
    (local.set $pb3 (i32.add (local.get $pb2) (local.get $stride)))
    (local.set $k (i32.const 0))
    (block $done
      (loop $chunk
        (br_if $done (i32.ge_u (local.get $k) (local.get $bytes)))
        (local.set $va (v128.load (i32.add (local.get $pa) (local.get $k))))
        (local.set $acc0 (i32x4.add (local.get $acc0) (i32x4.dot_i16x8_s (local.get $va) (v128.load (i32.add (local.get $pb) (local.get $k))))))
        (local.set $acc1 (i32x4.add (local.get $acc1) (i32x4.dot_i16x8_s (local.get $va) (v128.load (i32.add (local.get $pb1) (local.get $k))))))
        (local.set $acc2 (i32x4.add (local.get $acc2) (i32x4.dot_i16x8_s (local.get $va) (v128.load (i32.add (local.get $pb2) (local.get $k))))))
        (local.set $acc3 (i32x4.add (local.get $acc3) (i32x4.dot_i16x8_s (local.get $va) (v128.load (i32.add (local.get $pb3) (local.get $k))))))
        (local.set $va (v128.load offset=16 (i32.add (local.get $pa) (local.get $k))))
        (local.set $acc0 (i32x4.add (local.get $acc0) (i32x4.dot_i16x8_s (local.get $va) (v128.load offset=16 (i32.add (local.get $pb) (local.get $k))))))
        (local.set $acc1 (i32x4.add (local.get $acc1) (i32x4.dot_i16x8_s (local.get $va) (v128.load offset=16 (i32.add (local.get $pb1) (local.get $k))))))
        (local.set $acc2 (i32x4.add (local.get $acc2) (i32x4.dot_i16x8_s (local.get $va) (v128.load offset=16 (i32.add (local.get $pb2) (local.get $k))))))
        (local.set $acc3 (i32x4.add (local.get $acc3) (i32x4.dot_i16x8_s (local.get $va) (v128.load offset=16 (i32.add (local.get $pb3) (local.get $k))))))
        (local.set $k (i32.add (local.get $k) (i32.const 32)))
        (br $chunk)))
    (call $sum4 (local.get $acc0) (local.get $acc1) (local.get $acc2) (local.get $acc3)))

  ;; The four sums of four accumulators ([sum acc0, sum acc1, sum acc2, sum acc3]): [a0+a2, a1+a3, b0+b2, b1+b3]
  ;; of acc0 (a) and acc1 (b), the same of acc2 and acc3, then the four sums.
  (func $sum4 (param $acc0 v128) (param $acc1 v128) (param $acc2 v128) (param $acc3 v128) (result v128)
    (local $s01 v128) (local $s23 v128)
    (local.set $s01 (i32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $acc0) (local.get $acc1))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $acc0) (local.get $acc1))))
    (local.set $s23 (i32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $acc2) (local.get $acc3))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $acc2) (local.get $acc3))))
    (i32x4.add
      (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $s01) (local.get $s23))
      (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $s01) (local.get $s23))))

  ;; Dot products of two widened rows (pa, pa + bytes) with the 4 widened rows at pb, pb + stride, ...: each
  ;; load of b serves both rows. Returns row pa's four, then row pa + bytes's four.
  (func $dot2x4 (param $pa i32) (param $pb i32) (param $stride i32) (param $bytes i32) (result v128 v128)
    (local $k i32) (local $pa1 i32) (local $va0 v128) (local $va1 v128) (local $vb v128) (local $pb1 i32) (local $pb2 i32) (local $pb3 i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128)
    (local.set $pa1 (i32.add (local.get $pa) (local.get $bytes)))
    (local.set $pb1 (i32.add (local.get $pb) (local.get $stride)))
    (local.set $pb2 (i32.add (local.get $pb1) (local.get $stride)))
    (local.set $pb3 (i32.add (local.get $pb2) (local.get $stride)))
    (local.set $k (i32.const 0))
    (block $done
      (loop $chunk
        (br_if $done (i32.ge_u (local.get $k) (local.get $bytes)))
        (local.set $va0 (v128.load (i32.add (local.get $pa) (local.get $k))))
        (local.set $va1 (v128.load (i32.add (local.get $pa1) (local.get $k))))
        (local.set $vb (v128.load (i32.add (local.get $pb) (local.get $k))))
        (local.set $a0 (i32x4.add (local.get $a0) (i32x4.dot_i16x8_s (local.get $va0) (local.get $vb))))
        (local.set $c0 (i32x4.add (local.get $c0) (i32x4.dot_i16x8_s (local.get $va1) (local.get $vb))))
        (local.set $vb (v128.load (i32.add (local.get $pb1) (local.get $k))))
        (local.set $a1 (i32x4.add (local.get $a1) (i32x4.dot_i16x8_s (local.get $va0) (local.get $vb))))
        (local.set $c1 (i32x4.add (local.get $c1) (i32x4.dot_i16x8_s (local.get $va1) (local.get $vb))))
        (local.set $vb (v128.load (i32.add (local.get $pb2) (local.get $k))))
        (local.set $a2 (i32x4.add (local.get $a2) (i32x4.dot_i16x8_s (local.get $va0) (local.get $vb))))
        (local.set $c2 (i32x4.add (local.get $c2) (i32x4.dot_i16x8_s (local.get $va1) (local.get $vb))))
        (local.set $vb (v128.load (i32.add (local.get $pb3) (local.get $k))))
        (local.set $a3 (i32x4.add (local.get $a3) (i32x4.dot_i16x8_s (local.get $va0) (local.get $vb))))
        (local.set $c3 (i32x4.add (local.get $c3) (i32x4.dot_i16x8_s (local.get $va1) (local.get $vb))))
        (local.set $k (i32.add (local.get $k) (i32.const 16)))
        (br $chunk)))
    (call $sum4 (local.get $a0) (local.get $a1) (local.get $a2) (local.get $a3))
    (call $sum4 (local.get $c0) (local.get $c1) (local.get $c2) (local.get $c3)))

  ;; The na x nb dot products of the widened rows at pa and pb, row-major at out. b holds rows up to nb
  ;; rounded up to a multiple of 4 (the caller zero-fills the extra rows) and out has room for 3 more
  ;; values: a row's last block may spill into the next row's first values, which are written after it.
  (func (export "matrix") (param $pa i32) (param $na i32) (param $pb i32) (param $nb i32) (param $dims i32) (param $out i32)
    (local $i i32) (local $j i32) (local $bytes i32) (local $ra i32) (local $ro i32)
    (local.set $bytes (i32.shl (local.get $dims) (i32.const 1)))
    (local.set $i (i32.const 0))
    (block $rowsDone
      (loop $row
        (br_if $rowsDone (i32.ge_u (local.get $i) (local.get $na)))
        (local.set $ra (i32.add (local.get $pa) (i32.mul (local.get $i) (local.get $bytes))))
        (local.set $ro (i32.add (local.get $out) (i32.shl (i32.mul (local.get $i) (local.get $nb)) (i32.const 2))))
        (local.set $j (i32.const 0))
        (block $colsDone
          (loop $block
            (br_if $colsDone (i32.ge_u (local.get $j) (local.get $nb)))
            (v128.store (i32.add (local.get $ro) (i32.shl (local.get $j) (i32.const 2)))
              (call $dot4 (local.get $ra) (i32.add (local.get $pb) (i32.mul (local.get $j) (local.get $bytes))) (local.get $bytes) (local.get $bytes)))
            (local.set $j (i32.add (local.get $j) (i32.const 4)))
            (br $block)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $row))))

  ;; For each of `frames` consecutive blocks of na widened rows at pa, against the nb widened rows at pb
  ;; (zero rows up to nbPad, a multiple of 4), writes at out, block after block, i32 each:
  ;; rowBest[na], rowSecond[na], rowIndex[na] (each row's largest dot product, the runner-up, the first
  ;; column reaching the largest; INT32_MIN, INT32_MIN, -1 when nb = 0), then columnBest[nbPad] and
  ;; columnRow[nbPad] (each column's largest dot product and the first row reaching it). Exactly what a
  ;; scalar scan in row, then column order gives. Rows go two at a time (`$dot2x4`), the last one of an odd
  ;; count alone. `scratch` is 48 bytes of working memory.
  (func (export "nearest") (param $pa i32) (param $na i32) (param $frames i32) (param $pb i32) (param $nb i32) (param $nbPad i32) (param $dims i32) (param $out i32) (param $scratch i32)
    (local $f i32) (local $i i32) (local $j i32) (local $bytes i32) (local $ra i32) (local $pair i32)
    (local $rows i32) (local $colBest i32) (local $colRow i32)
    (local $d v128) (local $d1 v128) (local $gt v128) (local $valid v128)
    (local $bestV v128) (local $secondV v128) (local $indexV v128)
    (local $best1 v128) (local $second1 v128) (local $index1 v128)
    (local $jV v128) (local $iV v128) (local $iV1 v128) (local $nbV v128) (local $minV v128) (local $cb v128) (local $cr v128) (local $cp i32)
    (local.set $bytes (i32.shl (local.get $dims) (i32.const 1)))
    (local.set $minV (i32x4.splat (i32.const 0x80000000)))
    (local.set $nbV (i32x4.splat (local.get $nb)))
    (local.set $f (i32.const 0))
    (block $framesDone
      (loop $frame
        (br_if $framesDone (i32.ge_u (local.get $f) (local.get $frames)))
        (local.set $rows (i32.add (local.get $out)
          (i32.shl (i32.mul (local.get $f) (i32.add (i32.mul (local.get $na) (i32.const 3)) (i32.shl (local.get $nbPad) (i32.const 1)))) (i32.const 2))))
        (local.set $colBest (i32.add (local.get $rows) (i32.shl (i32.mul (local.get $na) (i32.const 3)) (i32.const 2))))
        (local.set $colRow (i32.add (local.get $colBest) (i32.shl (local.get $nbPad) (i32.const 2))))
        (local.set $j (i32.const 0))
        (block $initDone
          (loop $init
            (br_if $initDone (i32.ge_u (local.get $j) (local.get $nbPad)))
            (v128.store (i32.add (local.get $colBest) (i32.shl (local.get $j) (i32.const 2))) (local.get $minV))
            (v128.store (i32.add (local.get $colRow) (i32.shl (local.get $j) (i32.const 2))) (v128.const i32x4 -1 -1 -1 -1))
            (local.set $j (i32.add (local.get $j) (i32.const 4)))
            (br $init)))
        (local.set $i (i32.const 0))
        (block $rowsDone
          (loop $row
            (br_if $rowsDone (i32.ge_u (local.get $i) (local.get $na)))
            (local.set $pair (i32.lt_u (i32.add (local.get $i) (i32.const 1)) (local.get $na)))
            (local.set $ra (i32.add (local.get $pa) (i32.mul (i32.add (i32.mul (local.get $f) (local.get $na)) (local.get $i)) (local.get $bytes))))
            (local.set $bestV (local.get $minV))
            (local.set $secondV (local.get $minV))
            (local.set $indexV (v128.const i32x4 -1 -1 -1 -1))
            (local.set $best1 (local.get $minV))
            (local.set $second1 (local.get $minV))
            (local.set $index1 (v128.const i32x4 -1 -1 -1 -1))
            (local.set $jV (v128.const i32x4 0 1 2 3))
            (local.set $iV (i32x4.splat (local.get $i)))
            (local.set $iV1 (i32x4.splat (i32.add (local.get $i) (i32.const 1))))
            (local.set $j (i32.const 0))
            (block $colsDone
              (loop $block
                (br_if $colsDone (i32.ge_u (local.get $j) (local.get $nbPad)))
                (if (local.get $pair)
                  (then
                    (call $dot2x4 (local.get $ra) (i32.add (local.get $pb) (i32.mul (local.get $j) (local.get $bytes))) (local.get $bytes) (local.get $bytes))
                    (local.set $d1)
                    (local.set $d))
                  (else
                    (local.set $d (call $dot4 (local.get $ra) (i32.add (local.get $pb) (i32.mul (local.get $j) (local.get $bytes))) (local.get $bytes) (local.get $bytes)))))
                ;; Padding columns (j >= nb) read as INT32_MIN: never above anything.
                (local.set $valid (i32x4.lt_s (local.get $jV) (local.get $nbV)))
                (local.set $d (v128.bitselect (local.get $d) (local.get $minV) (local.get $valid)))
                ;; Per lane, as the scalar scan: above the best → best becomes second; else the larger of second and d.
                (local.set $gt (i32x4.gt_s (local.get $d) (local.get $bestV)))
                (local.set $secondV (v128.bitselect (local.get $bestV) (i32x4.max_s (local.get $secondV) (local.get $d)) (local.get $gt)))
                (local.set $bestV (v128.bitselect (local.get $d) (local.get $bestV) (local.get $gt)))
                (local.set $indexV (v128.bitselect (local.get $jV) (local.get $indexV) (local.get $gt)))
                (local.set $cp (i32.shl (local.get $j) (i32.const 2)))
                (local.set $cb (v128.load (i32.add (local.get $colBest) (local.get $cp))))
                (local.set $cr (v128.load (i32.add (local.get $colRow) (local.get $cp))))
                (local.set $gt (i32x4.gt_s (local.get $d) (local.get $cb)))
                (local.set $cb (v128.bitselect (local.get $d) (local.get $cb) (local.get $gt)))
                (local.set $cr (v128.bitselect (local.get $iV) (local.get $cr) (local.get $gt)))
                ;; The second row of a pair comes after the first in the scalar order, so it takes a column only when strictly above.
                (if (local.get $pair)
                  (then
                    (local.set $d1 (v128.bitselect (local.get $d1) (local.get $minV) (local.get $valid)))
                    (local.set $gt (i32x4.gt_s (local.get $d1) (local.get $best1)))
                    (local.set $second1 (v128.bitselect (local.get $best1) (i32x4.max_s (local.get $second1) (local.get $d1)) (local.get $gt)))
                    (local.set $best1 (v128.bitselect (local.get $d1) (local.get $best1) (local.get $gt)))
                    (local.set $index1 (v128.bitselect (local.get $jV) (local.get $index1) (local.get $gt)))
                    (local.set $gt (i32x4.gt_s (local.get $d1) (local.get $cb)))
                    (local.set $cb (v128.bitselect (local.get $d1) (local.get $cb) (local.get $gt)))
                    (local.set $cr (v128.bitselect (local.get $iV1) (local.get $cr) (local.get $gt)))))
                (v128.store (i32.add (local.get $colBest) (local.get $cp)) (local.get $cb))
                (v128.store (i32.add (local.get $colRow) (local.get $cp)) (local.get $cr))
                (local.set $jV (i32x4.add (local.get $jV) (v128.const i32x4 4 4 4 4)))
                (local.set $j (i32.add (local.get $j) (i32.const 4)))
                (br $block)))
            (call $finishRow (local.get $bestV) (local.get $secondV) (local.get $indexV) (local.get $scratch) (local.get $rows) (local.get $na) (local.get $i))
            (if (local.get $pair)
              (then
                (call $finishRow (local.get $best1) (local.get $second1) (local.get $index1) (local.get $scratch) (local.get $rows) (local.get $na) (i32.add (local.get $i) (i32.const 1)))))
            (local.set $i (i32.add (local.get $i) (i32.add (local.get $pair) (i32.const 1))))
            (br $row)))
        (local.set $f (i32.add (local.get $f) (i32.const 1)))
        (br $frame))))

  ;; Row i's four lanes' top two merged (the two largest of all values seen), and the first column reaching the
  ;; largest (the smallest index among the lanes whose best it is), stored as rowBest[i], rowSecond[i], rowIndex[i].
  (func $finishRow (param $bestV v128) (param $secondV v128) (param $indexV v128) (param $scratch i32) (param $rows i32) (param $na i32) (param $i i32)
    (local $l i32) (local $v i32) (local $best i32) (local $second i32) (local $index i32)
    (v128.store (local.get $scratch) (local.get $bestV))
    (v128.store offset=16 (local.get $scratch) (local.get $secondV))
    (v128.store offset=32 (local.get $scratch) (local.get $indexV))
    (local.set $best (i32.const 0x80000000))
    (local.set $second (i32.const 0x80000000))
    (local.set $l (i32.const 0))
    (block $mergeDone
      (loop $merge
        (br_if $mergeDone (i32.ge_u (local.get $l) (i32.const 32)))
        (local.set $v (i32.load (i32.add (local.get $scratch) (local.get $l))))
        (if (i32.gt_s (local.get $v) (local.get $best))
          (then (local.set $second (local.get $best)) (local.set $best (local.get $v)))
          (else (if (i32.gt_s (local.get $v) (local.get $second)) (then (local.set $second (local.get $v))))))
        (local.set $l (i32.add (local.get $l) (i32.const 4)))
        (br $merge)))
    (local.set $index (i32.const -1))
    (local.set $l (i32.const 0))
    (block $indexDone
      (loop $lane
        (br_if $indexDone (i32.ge_u (local.get $l) (i32.const 16)))
        (if (i32.eq (i32.load (i32.add (local.get $scratch) (local.get $l))) (local.get $best))
          (then
            (local.set $v (i32.load offset=32 (i32.add (local.get $scratch) (local.get $l))))
            (if (i32.or (i32.lt_s (local.get $index) (i32.const 0)) (i32.lt_s (local.get $v) (local.get $index)))
              (then (local.set $index (local.get $v))))))
        (local.set $l (i32.add (local.get $l) (i32.const 4)))
        (br $lane)))
    (i32.store (i32.add (local.get $rows) (i32.shl (local.get $i) (i32.const 2))) (local.get $best))
    (i32.store (i32.add (local.get $rows) (i32.shl (i32.add (local.get $na) (local.get $i)) (i32.const 2))) (local.get $second))
    (i32.store (i32.add (local.get $rows) (i32.shl (i32.add (i32.shl (local.get $na) (i32.const 1)) (local.get $i)) (i32.const 2))) (local.get $index)))

  ;; For each of the na widened rows at pa (`bytes` = 2 x dims apart), the second largest of its dot products with
  ;; the nb rows of a matrix stored column pair by column pair at pt ([pair][row, nbPad of them][2] int16; nbPad a
  ;; multiple of 16, the rows from nb up ignored): what `nearest` gives as rowSecond (INT32_MIN when nb < 2).
  ;; Two rows at a time against 16 matrix rows, as the network kernel's convolution: one splatted pair of each row
  ;; times four vectors of 4 matrix rows' pairs, so no horizontal sums; each lane keeps its own top two, and
  ;; `$finishRow` merges the lanes into out as `nearest` lays it out: rowBest[na], rowSecond[na], then rowIndex[na]
  ;; (not tracked here: -1). An odd na's last row is computed in both halves. `scratch` is 48 bytes.
  (func (export "secondBest") (param $pa i32) (param $na i32) (param $bytes i32) (param $pt i32) (param $nb i32) (param $nbPad i32) (param $out i32) (param $scratch i32)
    (local $i i32) (local $ra0 i32) (local $ra1 i32) (local $jb i32) (local $w i32) (local $p i32) (local $q i32) (local $end i32)
    (local $pairStride i32) (local $a v128) (local $b v128) (local $wv v128) (local $d v128) (local $gt v128)
    (local $jV v128) (local $nbV v128) (local $minV v128)
    (local $best0 v128) (local $second0 v128) (local $best1 v128) (local $second1 v128)
    (local $acc0 v128) (local $acc1 v128) (local $acc2 v128) (local $acc3 v128)
    (local $acc4 v128) (local $acc5 v128) (local $acc6 v128) (local $acc7 v128)
    (local.set $pairStride (i32.shl (local.get $nbPad) (i32.const 2)))
    (local.set $minV (i32x4.splat (i32.const 0x80000000)))
    (local.set $nbV (i32x4.splat (local.get $nb)))
    (local.set $i (i32.const 0))
    (block $rowsDone
      (loop $rows
        (br_if $rowsDone (i32.ge_u (local.get $i) (local.get $na)))
        (local.set $ra0 (i32.add (local.get $pa) (i32.mul (local.get $i) (local.get $bytes))))
        (local.set $ra1 (select (i32.add (local.get $ra0) (local.get $bytes)) (local.get $ra0)
          (i32.lt_u (i32.add (local.get $i) (i32.const 1)) (local.get $na))))
        (local.set $best0 (local.get $minV))
        (local.set $second0 (local.get $minV))
        (local.set $best1 (local.get $minV))
        (local.set $second1 (local.get $minV))
        (local.set $jV (v128.const i32x4 0 1 2 3))
        (local.set $jb (i32.const 0))
        (block $blocksDone
          (loop $blocks
            (br_if $blocksDone (i32.ge_u (local.get $jb) (local.get $nbPad)))
            (local.set $acc0 (v128.const i32x4 0 0 0 0))
            (local.set $acc1 (v128.const i32x4 0 0 0 0))
            (local.set $acc2 (v128.const i32x4 0 0 0 0))
            (local.set $acc3 (v128.const i32x4 0 0 0 0))
            (local.set $acc4 (v128.const i32x4 0 0 0 0))
            (local.set $acc5 (v128.const i32x4 0 0 0 0))
            (local.set $acc6 (v128.const i32x4 0 0 0 0))
            (local.set $acc7 (v128.const i32x4 0 0 0 0))
            (local.set $w (i32.add (local.get $pt) (i32.shl (local.get $jb) (i32.const 2))))
            (local.set $p (local.get $ra0))
            (local.set $q (local.get $ra1))
            (local.set $end (i32.add (local.get $ra0) (local.get $bytes)))
            (loop $pairs
              (local.set $a (v128.load32_splat (local.get $p)))
              (local.set $b (v128.load32_splat (local.get $q)))
              (local.set $wv (v128.load (local.get $w)))
              (local.set $acc0 (i32x4.add (local.get $acc0) (i32x4.dot_i16x8_s (local.get $wv) (local.get $a))))
              (local.set $acc4 (i32x4.add (local.get $acc4) (i32x4.dot_i16x8_s (local.get $wv) (local.get $b))))
              (local.set $wv (v128.load offset=16 (local.get $w)))
              (local.set $acc1 (i32x4.add (local.get $acc1) (i32x4.dot_i16x8_s (local.get $wv) (local.get $a))))
              (local.set $acc5 (i32x4.add (local.get $acc5) (i32x4.dot_i16x8_s (local.get $wv) (local.get $b))))
              (local.set $wv (v128.load offset=32 (local.get $w)))
              (local.set $acc2 (i32x4.add (local.get $acc2) (i32x4.dot_i16x8_s (local.get $wv) (local.get $a))))
              (local.set $acc6 (i32x4.add (local.get $acc6) (i32x4.dot_i16x8_s (local.get $wv) (local.get $b))))
              (local.set $wv (v128.load offset=48 (local.get $w)))
              (local.set $acc3 (i32x4.add (local.get $acc3) (i32x4.dot_i16x8_s (local.get $wv) (local.get $a))))
              (local.set $acc7 (i32x4.add (local.get $acc7) (i32x4.dot_i16x8_s (local.get $wv) (local.get $b))))
              (local.set $w (i32.add (local.get $w) (local.get $pairStride)))
              (local.set $p (i32.add (local.get $p) (i32.const 4)))
              (local.set $q (i32.add (local.get $q) (i32.const 4)))
              (br_if $pairs (i32.lt_u (local.get $p) (local.get $end))))
            ;; Matrix rows from nb up read as INT32_MIN: never above anything.
        (local.set $d (v128.bitselect (local.get $acc0) (local.get $minV) (i32x4.lt_s (i32x4.add (local.get $jV) (v128.const i32x4 0 0 0 0)) (local.get $nbV))))
        (local.set $gt (i32x4.gt_s (local.get $d) (local.get $best0)))
        (local.set $second0 (v128.bitselect (local.get $best0) (i32x4.max_s (local.get $second0) (local.get $d)) (local.get $gt)))
        (local.set $best0 (v128.bitselect (local.get $d) (local.get $best0) (local.get $gt)))
        (local.set $d (v128.bitselect (local.get $acc1) (local.get $minV) (i32x4.lt_s (i32x4.add (local.get $jV) (v128.const i32x4 4 4 4 4)) (local.get $nbV))))
        (local.set $gt (i32x4.gt_s (local.get $d) (local.get $best0)))
        (local.set $second0 (v128.bitselect (local.get $best0) (i32x4.max_s (local.get $second0) (local.get $d)) (local.get $gt)))
        (local.set $best0 (v128.bitselect (local.get $d) (local.get $best0) (local.get $gt)))
        (local.set $d (v128.bitselect (local.get $acc2) (local.get $minV) (i32x4.lt_s (i32x4.add (local.get $jV) (v128.const i32x4 8 8 8 8)) (local.get $nbV))))
        (local.set $gt (i32x4.gt_s (local.get $d) (local.get $best0)))
        (local.set $second0 (v128.bitselect (local.get $best0) (i32x4.max_s (local.get $second0) (local.get $d)) (local.get $gt)))
        (local.set $best0 (v128.bitselect (local.get $d) (local.get $best0) (local.get $gt)))
        (local.set $d (v128.bitselect (local.get $acc3) (local.get $minV) (i32x4.lt_s (i32x4.add (local.get $jV) (v128.const i32x4 12 12 12 12)) (local.get $nbV))))
        (local.set $gt (i32x4.gt_s (local.get $d) (local.get $best0)))
        (local.set $second0 (v128.bitselect (local.get $best0) (i32x4.max_s (local.get $second0) (local.get $d)) (local.get $gt)))
        (local.set $best0 (v128.bitselect (local.get $d) (local.get $best0) (local.get $gt)))
        (local.set $d (v128.bitselect (local.get $acc4) (local.get $minV) (i32x4.lt_s (i32x4.add (local.get $jV) (v128.const i32x4 0 0 0 0)) (local.get $nbV))))
        (local.set $gt (i32x4.gt_s (local.get $d) (local.get $best1)))
        (local.set $second1 (v128.bitselect (local.get $best1) (i32x4.max_s (local.get $second1) (local.get $d)) (local.get $gt)))
        (local.set $best1 (v128.bitselect (local.get $d) (local.get $best1) (local.get $gt)))
        (local.set $d (v128.bitselect (local.get $acc5) (local.get $minV) (i32x4.lt_s (i32x4.add (local.get $jV) (v128.const i32x4 4 4 4 4)) (local.get $nbV))))
        (local.set $gt (i32x4.gt_s (local.get $d) (local.get $best1)))
        (local.set $second1 (v128.bitselect (local.get $best1) (i32x4.max_s (local.get $second1) (local.get $d)) (local.get $gt)))
        (local.set $best1 (v128.bitselect (local.get $d) (local.get $best1) (local.get $gt)))
        (local.set $d (v128.bitselect (local.get $acc6) (local.get $minV) (i32x4.lt_s (i32x4.add (local.get $jV) (v128.const i32x4 8 8 8 8)) (local.get $nbV))))
        (local.set $gt (i32x4.gt_s (local.get $d) (local.get $best1)))
        (local.set $second1 (v128.bitselect (local.get $best1) (i32x4.max_s (local.get $second1) (local.get $d)) (local.get $gt)))
        (local.set $best1 (v128.bitselect (local.get $d) (local.get $best1) (local.get $gt)))
        (local.set $d (v128.bitselect (local.get $acc7) (local.get $minV) (i32x4.lt_s (i32x4.add (local.get $jV) (v128.const i32x4 12 12 12 12)) (local.get $nbV))))
        (local.set $gt (i32x4.gt_s (local.get $d) (local.get $best1)))
        (local.set $second1 (v128.bitselect (local.get $best1) (i32x4.max_s (local.get $second1) (local.get $d)) (local.get $gt)))
        (local.set $best1 (v128.bitselect (local.get $d) (local.get $best1) (local.get $gt)))
            (local.set $jV (i32x4.add (local.get $jV) (v128.const i32x4 16 16 16 16)))
            (local.set $jb (i32.add (local.get $jb) (i32.const 16)))
            (br $blocks)))
        (call $finishRow (local.get $best0) (local.get $second0) (v128.const i32x4 -1 -1 -1 -1) (local.get $scratch) (local.get $out) (local.get $na) (local.get $i))
        (if (i32.lt_u (i32.add (local.get $i) (i32.const 1)) (local.get $na))
          (then
            (call $finishRow (local.get $best1) (local.get $second1) (v128.const i32x4 -1 -1 -1 -1) (local.get $scratch) (local.get $out) (local.get $na) (i32.add (local.get $i) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $rows))))
)
