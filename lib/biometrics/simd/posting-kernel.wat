;; The 1:N first stage's inner loops (lib/biometrics/inverted-index.ts), over posting lists held in this
;; module's memory. A posting list is a chain of blocks; a block of capacity c is laid out as
;;   [0] next block (i32, 0 = last)   [4] postings held (u16)   [6] capacity c (u16)
;;   [8] c signatures (i64)   [8 + 8c] c image rows (i32)   [8 + 12c] c orientations (u8)
;; The vote weight of each Hamming distance 0..64 is an f64 table at address 0, written by the host.
;; Arithmetic is in f64 with f32 storage, as the JavaScript it replaced, so votes are bit-identical.
;;
;; A probe image's votes are first written to a log, 16 bytes a vote, in the order they are cast:
;;   [0] image row (i32)   [4] the probe keypoint's stamp << binsLog2 | orientation bin (i32)   [8] vote (f64)
;; and summed afterwards (`finish`), a window of rows at a time: adding each vote straight into its row's histogram,
;; as the scan finds it, missed the cache on nearly every vote of a large gallery, and so did a stamp a row.
(module
  (memory (export "memory") 1)

  ;; One probe keypoint's lookup in one list: every posting within `threshold` bits of the query signature votes for
  ;; its image in the orientation bin of the angle change, under the keypoint's `stampKey` (its stamp << binsLog2;
  ;; `finish` counts a row's first vote of a stamp only). The votes are appended to the log at `log`, which holds
  ;; `nLog`; returns the new count. The host makes room for a vote a posting.
  (func (export "scan")
    (param $block i32) (param $qlo i32) (param $qhi i32) (param $angle i32) (param $weight f64)
    (param $stampKey i32) (param $threshold i32) (param $angleShift i32) (param $log i32) (param $nLog i32)
    (result i32)
    (local $q i64) (local $n i32) (local $cap i32) (local $sigs i32) (local $rows i32) (local $angles i32)
    (local $j i32) (local $d i32) (local $e i32)
    (local.set $q (i64.or (i64.extend_i32_u (local.get $qlo)) (i64.shl (i64.extend_i32_u (local.get $qhi)) (i64.const 32))))
    (block $end
      (loop $blocks
        (br_if $end (i32.eqz (local.get $block)))
        (local.set $n (i32.load16_u offset=4 (local.get $block)))
        (local.set $cap (i32.load16_u offset=6 (local.get $block)))
        (local.set $sigs (i32.add (local.get $block) (i32.const 8)))
        (local.set $rows (i32.add (local.get $sigs) (i32.shl (local.get $cap) (i32.const 3))))
        (local.set $angles (i32.add (local.get $rows) (i32.shl (local.get $cap) (i32.const 2))))
        (local.set $j (i32.const 0))
        (block $done
          (loop $postings
            (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
            (local.set $d (i32.wrap_i64 (i64.popcnt (i64.xor (local.get $q)
              (i64.load (i32.add (local.get $sigs) (i32.shl (local.get $j) (i32.const 3))))))))
            (if (i32.le_u (local.get $d) (local.get $threshold))
              (then
                (local.set $e (i32.add (local.get $log) (i32.shl (local.get $nLog) (i32.const 4))))
                (i32.store (local.get $e) (i32.load (i32.add (local.get $rows) (i32.shl (local.get $j) (i32.const 2)))))
                (i32.store offset=4 (local.get $e) (i32.or (local.get $stampKey) (i32.shr_u
                  (i32.and (i32.sub (local.get $angle) (i32.load8_u (i32.add (local.get $angles) (local.get $j)))) (i32.const 255))
                  (local.get $angleShift))))
                (f64.store offset=8 (local.get $e) (f64.mul (local.get $weight) (f64.load (i32.shl (local.get $d) (i32.const 3)))))
                (local.set $nLog (i32.add (local.get $nLog) (i32.const 1)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $postings)))
        (local.set $block (i32.load (local.get $block)))
        (br $blocks)))
    (local.get $nLog))

  ;; After one probe image: its `n` logged votes summed into each row's orientation histogram, in the order they were
  ;; cast, a row's first vote of each stamp only (an image takes one vote of a probe keypoint's lookups); each live row (pet at `rowPet` ≥ 0) scores its best pair of adjacent orientation bins, and its pet keeps its
  ;; two best row scores (f64 best, then second, 16 bytes a pet at `petBest`). Pets that got their first score are
  ;; appended at `petTouched`; returns how many. The log itself is left as it was (a later pass of the same search may
  ;; add to it: the cascade's deep pass resuming the fast pass's votes).
  ;; The votes are first partitioned by window (rows `row >> windowShift`; i32 per window at `cursors`, `windows` of
  ;; them) into `sorted`, keeping their order; then each window's rows are summed in a histogram region of their own
  ;; (`hist`, 1 << windowShift rows of 1 << binsLog2 f32), with the stamp of each row's last vote (`flags`, i32: 0 for
  ;; a row the window has not touched, and left so) and the list of rows the window touched (`windowRows`).
  (func (export "finish")
    (param $log i32) (param $n i32) (param $sorted i32) (param $cursors i32) (param $windows i32) (param $windowShift i32)
    (param $hist i32) (param $flags i32) (param $windowRows i32) (param $binsLog2 i32)
    (param $rowPet i32) (param $petBest i32) (param $petTouched i32)
    (result i32)
    (local $i i32) (local $e i32) (local $cp i32) (local $c i32) (local $sum i32) (local $start i32) (local $stop i32)
    (local $w i32) (local $row i32) (local $r i32) (local $k i32) (local $t i32) (local $base i32) (local $hp i32)
    (local $bins i32) (local $b i32) (local $pet i32) (local $best f64) (local $pp i32) (local $old f64) (local $m i32)
    (local $mask i32) (local $key i32) (local $stamp i32) (local $fp i32)
    (local.set $bins (i32.shl (i32.const 1) (local.get $binsLog2)))
    (local.set $mask (i32.sub (i32.shl (i32.const 1) (local.get $windowShift)) (i32.const 1)))
    (local.set $m (i32.const 0))
    ;; Votes a window, then each window's first slot in `sorted`.
    (memory.fill (local.get $cursors) (i32.const 0) (i32.shl (local.get $windows) (i32.const 2)))
    (local.set $i (i32.const 0))
    (block $counted
      (loop $count
        (br_if $counted (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $cp (i32.add (local.get $cursors) (i32.shl
          (i32.shr_u (i32.load (i32.add (local.get $log) (i32.shl (local.get $i) (i32.const 4)))) (local.get $windowShift))
          (i32.const 2))))
        (i32.store (local.get $cp) (i32.add (i32.load (local.get $cp)) (i32.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $count)))
    (local.set $sum (i32.const 0))
    (local.set $w (i32.const 0))
    (block $summed
      (loop $prefix
        (br_if $summed (i32.ge_u (local.get $w) (local.get $windows)))
        (local.set $cp (i32.add (local.get $cursors) (i32.shl (local.get $w) (i32.const 2))))
        (local.set $c (i32.load (local.get $cp)))
        (i32.store (local.get $cp) (local.get $sum))
        (local.set $sum (i32.add (local.get $sum) (local.get $c)))
        (local.set $w (i32.add (local.get $w) (i32.const 1)))
        (br $prefix)))
    ;; Each vote to its window's next slot: a window's votes stay in the order they were cast. Each cursor ends at its
    ;; window's end.
    (local.set $i (i32.const 0))
    (block $moved
      (loop $move
        (br_if $moved (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $e (i32.add (local.get $log) (i32.shl (local.get $i) (i32.const 4))))
        (local.set $cp (i32.add (local.get $cursors) (i32.shl (i32.shr_u (i32.load (local.get $e)) (local.get $windowShift)) (i32.const 2))))
        (local.set $c (i32.load (local.get $cp)))
        (v128.store (i32.add (local.get $sorted) (i32.shl (local.get $c) (i32.const 4))) (v128.load (local.get $e)))
        (i32.store (local.get $cp) (i32.add (local.get $c) (i32.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $move)))
    ;; Window by window: sum its votes, then score its rows.
    (local.set $start (i32.const 0))
    (local.set $w (i32.const 0))
    (block $windowsDone
      (loop $eachWindow
        (br_if $windowsDone (i32.ge_u (local.get $w) (local.get $windows)))
        (local.set $stop (i32.load (i32.add (local.get $cursors) (i32.shl (local.get $w) (i32.const 2)))))
        (local.set $k (i32.const 0))
        (local.set $i (local.get $start))
        (block $votesDone
          (loop $eachVote
            (br_if $votesDone (i32.ge_u (local.get $i) (local.get $stop)))
            (local.set $e (i32.add (local.get $sorted) (i32.shl (local.get $i) (i32.const 4))))
            (local.set $row (i32.load (local.get $e)))
            (local.set $r (i32.and (local.get $row) (local.get $mask)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (local.set $key (i32.load offset=4 (local.get $e)))
            (local.set $stamp (i32.shr_u (local.get $key) (local.get $binsLog2)))
            (local.set $fp (i32.add (local.get $flags) (i32.shl (local.get $r) (i32.const 2))))
            (local.set $base (i32.add (local.get $hist) (i32.shl (i32.shl (local.get $r) (local.get $binsLog2)) (i32.const 2))))
            ;; A later vote of the same stamp for this row is not counted (votes of one stamp are cast one after another).
            (br_if $eachVote (i32.eq (i32.load (local.get $fp)) (local.get $stamp)))
            (if (i32.eqz (i32.load (local.get $fp)))
              (then
                (i32.store (i32.add (local.get $windowRows) (i32.shl (local.get $k) (i32.const 2))) (local.get $row))
                (local.set $k (i32.add (local.get $k) (i32.const 1)))
                (memory.fill (local.get $base) (i32.const 0) (i32.shl (local.get $bins) (i32.const 2)))))
            (i32.store (local.get $fp) (local.get $stamp))
            (local.set $hp (i32.add (local.get $base) (i32.shl (i32.and (local.get $key) (i32.sub (local.get $bins) (i32.const 1))) (i32.const 2))))
            (f32.store (local.get $hp) (f32.demote_f64 (f64.add
              (f64.promote_f32 (f32.load (local.get $hp)))
              (f64.load offset=8 (local.get $e)))))
            (br $eachVote)))
        (local.set $t (i32.const 0))
        (block $rowsDone
          (loop $eachRow
            (br_if $rowsDone (i32.ge_u (local.get $t) (local.get $k)))
            (local.set $row (i32.load (i32.add (local.get $windowRows) (i32.shl (local.get $t) (i32.const 2)))))
            (local.set $t (i32.add (local.get $t) (i32.const 1)))
            (local.set $r (i32.and (local.get $row) (local.get $mask)))
            (i32.store (i32.add (local.get $flags) (i32.shl (local.get $r) (i32.const 2))) (i32.const 0))
            (local.set $pet (i32.load (i32.add (local.get $rowPet) (i32.shl (local.get $row) (i32.const 2)))))
            (br_if $eachRow (i32.lt_s (local.get $pet) (i32.const 0)))
            (local.set $base (i32.add (local.get $hist) (i32.shl (i32.shl (local.get $r) (local.get $binsLog2)) (i32.const 2))))
            (local.set $best (f64.const 0))
            (local.set $b (i32.const 0))
            (block $binsDone
              (loop $eachBin
                (br_if $binsDone (i32.ge_u (local.get $b) (local.get $bins)))
                (local.set $best (f64.max (local.get $best) (f64.add
                  (f64.promote_f32 (f32.load (i32.add (local.get $base) (i32.shl (local.get $b) (i32.const 2)))))
                  (f64.promote_f32 (f32.load (i32.add (local.get $base)
                    (i32.shl (i32.and (i32.add (local.get $b) (i32.const 1)) (i32.sub (local.get $bins) (i32.const 1))) (i32.const 2))))))))
                (local.set $b (i32.add (local.get $b) (i32.const 1)))
                (br $eachBin)))
            (local.set $pp (i32.add (local.get $petBest) (i32.shl (local.get $pet) (i32.const 4))))
            (local.set $old (f64.load (local.get $pp)))
            (if (f64.gt (local.get $best) (local.get $old))
              (then
                (if (f64.eq (local.get $old) (f64.const 0))
                  (then
                    (i32.store (i32.add (local.get $petTouched) (i32.shl (local.get $m) (i32.const 2))) (local.get $pet))
                    (local.set $m (i32.add (local.get $m) (i32.const 1)))))
                (f64.store offset=8 (local.get $pp) (local.get $old))
                (f64.store (local.get $pp) (local.get $best)))
              (else
                (if (f64.gt (local.get $best) (f64.load offset=8 (local.get $pp)))
                  (then (f64.store offset=8 (local.get $pp) (local.get $best))))))
            (br $eachRow)))
        (local.set $start (local.get $stop))
        (local.set $w (i32.add (local.get $w) (i32.const 1)))
        (br $eachWindow)))
    (local.get $m))

  ;; A gallery load's batch of search keys (search-key.ts' persisted form: "RHSK", format, count, then signatures,
  ;; words, angles), each at an address of the key table `keys` (8 bytes a key: its address, then its image row).
  ;; `count`: adds each key's postings to its words' counters (u32 per word at `counts`).
  (func (export "count")
    (param $keys i32) (param $n i32) (param $counts i32)
    (local $k i32) (local $key i32) (local $c i32) (local $words i32) (local $i i32) (local $at i32)
    (local.set $k (i32.const 0))
    (block $keysDone
      (loop $eachKey
        (br_if $keysDone (i32.ge_u (local.get $k) (local.get $n)))
        (local.set $key (i32.load (i32.add (local.get $keys) (i32.shl (local.get $k) (i32.const 3)))))
        (local.set $c (i32.load16_u offset=6 (local.get $key)))
        (local.set $words (i32.add (i32.add (local.get $key) (i32.const 8)) (i32.shl (local.get $c) (i32.const 3))))
        (local.set $i (i32.const 0))
        (block $done
          (loop $postings
            (br_if $done (i32.ge_u (local.get $i) (local.get $c)))
            (local.set $at (i32.add (local.get $counts)
              (i32.shl (i32.load16_u (i32.add (local.get $words) (i32.shl (local.get $i) (i32.const 1)))) (i32.const 2))))
            (i32.store (local.get $at) (i32.add (i32.load (local.get $at)) (i32.const 1)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $postings)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $eachKey))))

;; `partition`: the keys' postings as 16-byte records (signature, row, word, orientation), each written at its word's
  ;; bucket's cursor (i32 per bucket at `buckets`: words `w >> shift` share one), in key order: what `append` then
  ;; reads in order. Two passes, because a pass that writes every posting straight into its word's list keeps 8,192 lists'
  ;; blocks open at once and misses the cache on almost every posting; a bucket's records write into 1 << shift lists.
  (func (export "partition")
    (param $keys i32) (param $n i32) (param $buckets i32) (param $shift i32)
    (local $k i32) (local $key i32) (local $row i32) (local $c i32) (local $sigs i32) (local $words i32) (local $angles i32)
    (local $i i32) (local $w i32) (local $bp i32) (local $r i32)
    (local.set $k (i32.const 0))
    (block $keysDone
      (loop $eachKey
        (br_if $keysDone (i32.ge_u (local.get $k) (local.get $n)))
        (local.set $key (i32.load (i32.add (local.get $keys) (i32.shl (local.get $k) (i32.const 3)))))
        (local.set $row (i32.load offset=4 (i32.add (local.get $keys) (i32.shl (local.get $k) (i32.const 3)))))
        (local.set $c (i32.load16_u offset=6 (local.get $key)))
        (local.set $sigs (i32.add (local.get $key) (i32.const 8)))
        (local.set $words (i32.add (local.get $sigs) (i32.shl (local.get $c) (i32.const 3))))
        (local.set $angles (i32.add (local.get $words) (i32.shl (local.get $c) (i32.const 1))))
        (local.set $i (i32.const 0))
        (block $done
          (loop $postings
            (br_if $done (i32.ge_u (local.get $i) (local.get $c)))
            (local.set $w (i32.load16_u (i32.add (local.get $words) (i32.shl (local.get $i) (i32.const 1)))))
            (local.set $bp (i32.add (local.get $buckets) (i32.shl (i32.shr_u (local.get $w) (local.get $shift)) (i32.const 2))))
            (local.set $r (i32.load (local.get $bp)))
            (i32.store (local.get $bp) (i32.add (local.get $r) (i32.const 16)))
            (i64.store (local.get $r) (i64.load (i32.add (local.get $sigs) (i32.shl (local.get $i) (i32.const 3)))))
            (i32.store offset=8 (local.get $r) (local.get $row))
            (i32.store16 offset=12 (local.get $r) (local.get $w))
            (i32.store8 offset=14 (local.get $r) (i32.load8_u (i32.add (local.get $angles) (local.get $i))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $postings)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $eachKey))))

  ;; `append`: writes the records [`records`, `end`) in order, each at its word's cursor (8 bytes a word at `cursors`:
  ;; the block, then the slot the next posting takes), moving on to the next block of the chain when one is full. The
  ;; host has linked blocks enough for them and set each block's count.
  (func (export "append")
    (param $records i32) (param $end i32) (param $cursors i32)
    (local $r i32) (local $cp i32) (local $block i32) (local $j i32) (local $cap i32)
    (local.set $r (local.get $records))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $r) (local.get $end)))
        (local.set $cp (i32.add (local.get $cursors) (i32.shl (i32.load16_u offset=12 (local.get $r)) (i32.const 3))))
        (local.set $block (i32.load (local.get $cp)))
        (local.set $j (i32.load offset=4 (local.get $cp)))
        (local.set $cap (i32.load16_u offset=6 (local.get $block)))
        (if (i32.eq (local.get $j) (local.get $cap))
          (then
            (local.set $block (i32.load (local.get $block)))
            (local.set $j (i32.const 0))
            (local.set $cap (i32.load16_u offset=6 (local.get $block)))
            (i32.store (local.get $cp) (local.get $block))))
        (i64.store offset=8 (i32.add (local.get $block) (i32.shl (local.get $j) (i32.const 3))) (i64.load (local.get $r)))
        (i32.store offset=8 (i32.add (local.get $block) (i32.add (i32.shl (local.get $cap) (i32.const 3)) (i32.shl (local.get $j) (i32.const 2))))
          (i32.load offset=8 (local.get $r)))
        (i32.store8 offset=8 (i32.add (local.get $block) (i32.add (i32.mul (local.get $cap) (i32.const 12)) (local.get $j)))
          (i32.load8_u offset=14 (local.get $r)))
        (i32.store offset=4 (local.get $cp) (i32.add (local.get $j) (i32.const 1)))
        (local.set $r (i32.add (local.get $r) (i32.const 16)))
        (br $each))))
)
