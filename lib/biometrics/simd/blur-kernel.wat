;; Box filter passes of the Gaussian blur over f32 images (row-major, `width` x `height`, edges clamped).
;; Each output is a running sum kept in f64, started from zero over the clamped window and then moved one
;; step at a time by adding (entering - leaving), times `scale`, rounded to f32: the same operations in
;; the same order as the JavaScript loops this replaces, and IEEE f64 arithmetic rounds identically in
;; scalar and f64x2 lanes, so the results are bit-identical.
;; `columns` runs the sums down two columns at once (one f64x2), `rows` along each row.
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
        (br $rows)))))
