// The engine's native kernels, each giving exactly what the code it stands in for gives:
// - `nearest`, the pair matcher's nearest-neighbour figures: the same computation and results as `nearest` in
//   lib/biometrics/simd/dot-kernel.wat, on the kernel instance's own memory (a WebAssembly.Memory's ArrayBuffer, passed
//   with byte offsets), in its layout or one of bytes (below). WebAssembly SIMD multiplies 8 int16 pairs an instruction; AVX-512
//   VNNI (vpdpbusd, on bytes) multiplies and adds 64 into 16 columns at once, AVX2 (vpmaddwd) 16 into 8.
// - `bestAnchor`, the pair matcher's one-point RANSAC (pair-matcher.ts), in the same double arithmetic (below).
// - `lookupWords`, the 1:N vocabulary's lookups (visual-words.ts, assignWords and signatureIn): each descriptor's
//   nearest words and its Hamming signature under each (below).
// - `scanLookups` and `finishProbeImage`, the 1:N first stage's scans of a pass's posting lists and its summing of a
//   probe image's votes (`scan` and `finish` in lib/biometrics/simd/posting-kernel.wat), on that kernel's memory (below).
//
// - `adviseHugePages`, on any processor: asks Linux to back a WebAssembly memory with transparent huge pages
//   (madvise MADV_HUGEPAGE), which V8 does not ask for: under the kernel's common setting (`madvise`) a 1:N index of
//   gigabytes would otherwise be touched and read 4 KiB at a time (below).
//
// `nearest`'s layouts (byte offsets into the buffer), as the variant says (`variants[k].layout`):
//   "pairs" (AVX2, and the WebAssembly kernel's own): a at pa, `frames` blocks of `na` rows of `dims` int16 each (row i
//     of block f at pa + (f x na + i) x dims x 2); b at pt, column pair by column pair, pair p of column j at
//     pt + (p x nbPad + j) x 4 (two int16);
//   "quads" (AVX-512 VNNI): a at pa, the same rows as uint8, each value + 128 (row i of block f at pa + (f x na + i) x
//     dims); b at pt, column quad by column quad, quad q of column j at pt + (q x nbPad + j) x 4 (four int8), then each
//     column's sum as int32 (column j at pt + (dims / 4) x nbPad x 4 + j x 4; `layQuads` lays b out);
//   in both, nbPad a multiple of 16, columns from nb up ignored (zero), and
//   out: per block f at out + f x (3 na + 2 nbPad) x 4, int32 each: rowBest[na], rowSecond[na], rowIndex[na] (each
//     row's largest dot product, the runner-up, the first column reaching the largest; INT32_MIN, INT32_MIN, -1 when
//     nb = 0), then columnBest[nbPad] and columnRow[nbPad] (each column's largest dot product and the first row
//     reaching it).
// Exactly what a scalar scan in row, then column order gives: int16 products of int8 values and their sums fit in
// int32 exactly (and so do (a + 128) x b and its sums, from which 128 x the column's sum is taken), and every comparison
// keeps the first of equals, so the lanes' order does not change any result.
// madvise's advice and sysconf, which -std=c11 hides otherwise.
#define _DEFAULT_SOURCE
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

// The call's `n` arguments into `args`; false (a TypeError thrown) when it was given another number.
static int call_arguments(napi_env env, napi_callback_info info, size_t n, napi_value *args, const char *message) {
  size_t argc = n;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc != n) {
    napi_throw_type_error(env, NULL, message);
    return 0;
  }
  return 1;
}

// adviseHugePages(buffer): madvise(MADV_HUGEPAGE) over the buffer's whole pages; returns the bytes advised (0 where the
// platform has no such advice or the kernel refused it, as when transparent huge pages are `never`). The advice changes
// how memory is backed, never its contents.
static napi_value advise_huge_pages(napi_env env, napi_callback_info info) {
  napi_value args[1];
  if (!call_arguments(env, info, 1, args, "adviseHugePages takes one argument")) return NULL;
  void *data = NULL;
  size_t length = 0;
  if (napi_get_arraybuffer_info(env, args[0], &data, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "adviseHugePages takes an ArrayBuffer");
    return NULL;
  }
  double advised = 0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  const uintptr_t start = ((uintptr_t)data + page - 1) & ~(page - 1);
  const uintptr_t end = ((uintptr_t)data + length) & ~(page - 1);
  if (end > start && madvise((void *)start, end - start, MADV_HUGEPAGE) == 0) advised = (double)(end - start);
#endif
  napi_value result;
  napi_create_double(env, advised, &result);
  return result;
}

static void export_function(napi_env env, napi_value exports, const char *name, napi_callback cb) {
  napi_value fn;
  napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn);
  napi_set_named_property(env, exports, name, fn);
}

#if defined(__x86_64__)
#include <immintrin.h>

typedef void (*nearest_fn)(const uint8_t *a, int32_t na, int32_t frames, const uint8_t *b, int32_t nb, int32_t nbPad,
                           int32_t dims, int32_t *out);

// Four bytes as one int32 (two int16 of a row, or four uint8), to be broadcast.
static inline int32_t load_pair(const void *at) {
  int32_t value;
  memcpy(&value, at, sizeof value);
  return value;
}

// The lanes' top two merged (the two largest of all values seen) and the first column reaching the largest (the
// smallest index among the lanes whose best it is), stored as row i's figures.
static void finish_row(const int32_t *best, const int32_t *second, const int32_t *index, int lanes, int32_t *rows,
                       int32_t na, int32_t i) {
  int32_t top = INT32_MIN, runnerUp = INT32_MIN, first = -1;
  for (int l = 0; l < lanes; l++) {
    int32_t values[2] = {best[l], second[l]};
    for (int k = 0; k < 2; k++) {
      if (values[k] > top) {
        runnerUp = top;
        top = values[k];
      } else if (values[k] > runnerUp) {
        runnerUp = values[k];
      }
    }
  }
  for (int l = 0; l < lanes; l++) {
    if (best[l] == top && (first < 0 || index[l] < first)) first = index[l];
  }
  rows[i] = top;
  rows[na + i] = runnerUp;
  rows[2 * na + i] = first;
}

// finish_row for 16 lanes in AVX-512: the largest of the bests; the runner-up is the largest of the rest once one lane
// holding the largest is set aside (the seconds, and the other lanes' bests), which is what the scalar merge keeps; the
// first column is the smallest index among the lanes holding the largest (-1 throughout when nothing was seen).
__attribute__((target("avx512f"))) static void finish_row16(const int32_t *best, const int32_t *second,
                                                            const int32_t *index, int32_t *rows, int32_t na,
                                                            int32_t i) {
  const __m512i bestV = _mm512_loadu_si512((const void *)best);
  const int32_t top = _mm512_reduce_max_epi32(bestV);
  const __mmask16 holders = _mm512_cmpeq_epi32_mask(bestV, _mm512_set1_epi32(top));
  const __mmask16 firstHolder = holders & (__mmask16)(-(int)holders);
  const __m512i others = _mm512_mask_blend_epi32(firstHolder, bestV, _mm512_set1_epi32(INT32_MIN));
  const int32_t runnerUp =
      _mm512_reduce_max_epi32(_mm512_max_epi32(_mm512_loadu_si512((const void *)second), others));
  const int32_t first = _mm512_mask_reduce_min_epi32(holders, _mm512_loadu_si512((const void *)index));
  rows[i] = top;
  rows[na + i] = runnerUp;
  rows[2 * na + i] = first;
}

// Block f's output (the layout above): its row figures, then its columns' best and first row, the columns reset.
typedef struct {
  int32_t *rows, *colBest, *colRow;
} frame_output;

static frame_output start_frame(int32_t *out, int32_t f, int32_t na, int32_t nbPad) {
  frame_output frame;
  frame.rows = out + (size_t)f * (3 * na + 2 * nbPad);
  frame.colBest = frame.rows + 3 * na;
  frame.colRow = frame.colBest + nbPad;
  for (int32_t j = 0; j < nbPad; j++) {
    frame.colBest[j] = INT32_MIN;
    frame.colRow[j] = -1;
  }
  return frame;
}

// The `group` rows of `rowBytes` each of a block from row i on, in r (a row past the last repeats the last); returns how
// many are real.
static int row_group(const uint8_t *block, int32_t i, int32_t na, size_t rowBytes, int group, const uint8_t **r) {
  for (int k = 0; k < group; k++) r[k] = block + (size_t)(i + k < na ? i + k : na - 1) * rowBytes;
  return na - i < group ? na - i : group;
}

// The quads layout (above): eight rows of a at a time against 32 columns of b (two 512-bit vectors of column quads;
// the last 16 alone when nbPad is an odd number of 16s), vpdpbusd multiplying a's unsigned bytes (value + 128) by b's
// signed ones and adding each four products into a column's sum, so that sixteen independent sums are not held up by
// each other's latency and each loaded vector of b serves eight rows; 128 x the column's sum taken off gives the dot
// product exactly. A row past the last repeats the last and is neither written nor offered to a column.
__attribute__((target("avx512f,avx512vnni"))) static void nearest_avx512(const uint8_t *a, int32_t na,
                                                                          int32_t frames, const uint8_t *b, int32_t nb,
                                                                          int32_t nbPad, int32_t dims, int32_t *out) {
  const int32_t quads = dims / 4;
  const int32_t *columnSums = (const int32_t *)(b + (size_t)quads * nbPad * 4);
  const __m512i minV = _mm512_set1_epi32(INT32_MIN);
  const __m512i laneV = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i nbV = _mm512_set1_epi32(nb);
  for (int32_t f = 0; f < frames; f++) {
    const frame_output frame = start_frame(out, f, na, nbPad);
    int32_t *const rows = frame.rows, *const colBest = frame.colBest, *const colRow = frame.colRow;
    const uint8_t *block = a + (size_t)f * na * dims;
    for (int32_t i = 0; i < na; i += 8) {
      const uint8_t *r[8];
      const int live = row_group(block, i, na, (size_t)dims, 8, r);
      // Each row's lanes' top two and first column, kept in memory between blocks: the sums need the registers.
      int32_t best[8][16], second[8][16], index[8][16];
      for (int k = 0; k < 8; k++) {
        _mm512_storeu_si512((void *)best[k], minV);
        _mm512_storeu_si512((void *)second[k], minV);
        _mm512_storeu_si512((void *)index[k], _mm512_set1_epi32(-1));
      }
      for (int32_t jb = 0; jb < nbPad; jb += 32) {
        const int halves = jb + 16 < nbPad ? 2 : 1;
        // The second half's columns, 16 columns (64 bytes) on; the first again when there is none.
        const size_t second16 = halves == 2 ? 64 : 0;
        __m512i s00 = _mm512_setzero_si512(), s01 = _mm512_setzero_si512(), s02 = _mm512_setzero_si512(), s03 = _mm512_setzero_si512(), s04 = _mm512_setzero_si512(), s05 = _mm512_setzero_si512(), s06 = _mm512_setzero_si512(), s07 = _mm512_setzero_si512(), s10 = _mm512_setzero_si512(), s11 = _mm512_setzero_si512(), s12 = _mm512_setzero_si512(), s13 = _mm512_setzero_si512(), s14 = _mm512_setzero_si512(), s15 = _mm512_setzero_si512(), s16 = _mm512_setzero_si512(), s17 = _mm512_setzero_si512();
        const uint8_t *w = b + (size_t)jb * 4;
        for (int32_t p = 0; p < quads; p++, w += (size_t)nbPad * 4) {
          const __m512i c0 = _mm512_loadu_si512((const void *)w);
          const __m512i c1 = _mm512_loadu_si512((const void *)(w + second16));
          const __m512i x0 = _mm512_set1_epi32(load_pair(r[0] + 4 * p));
          s00 = _mm512_dpbusd_epi32(s00, x0, c0);
          s10 = _mm512_dpbusd_epi32(s10, x0, c1);
          const __m512i x1 = _mm512_set1_epi32(load_pair(r[1] + 4 * p));
          s01 = _mm512_dpbusd_epi32(s01, x1, c0);
          s11 = _mm512_dpbusd_epi32(s11, x1, c1);
          const __m512i x2 = _mm512_set1_epi32(load_pair(r[2] + 4 * p));
          s02 = _mm512_dpbusd_epi32(s02, x2, c0);
          s12 = _mm512_dpbusd_epi32(s12, x2, c1);
          const __m512i x3 = _mm512_set1_epi32(load_pair(r[3] + 4 * p));
          s03 = _mm512_dpbusd_epi32(s03, x3, c0);
          s13 = _mm512_dpbusd_epi32(s13, x3, c1);
          const __m512i x4 = _mm512_set1_epi32(load_pair(r[4] + 4 * p));
          s04 = _mm512_dpbusd_epi32(s04, x4, c0);
          s14 = _mm512_dpbusd_epi32(s14, x4, c1);
          const __m512i x5 = _mm512_set1_epi32(load_pair(r[5] + 4 * p));
          s05 = _mm512_dpbusd_epi32(s05, x5, c0);
          s15 = _mm512_dpbusd_epi32(s15, x5, c1);
          const __m512i x6 = _mm512_set1_epi32(load_pair(r[6] + 4 * p));
          s06 = _mm512_dpbusd_epi32(s06, x6, c0);
          s16 = _mm512_dpbusd_epi32(s16, x6, c1);
          const __m512i x7 = _mm512_set1_epi32(load_pair(r[7] + 4 * p));
          s07 = _mm512_dpbusd_epi32(s07, x7, c0);
          s17 = _mm512_dpbusd_epi32(s17, x7, c1);
        }
        const __m512i acc[2][8] = {{s00, s01, s02, s03, s04, s05, s06, s07}, {s10, s11, s12, s13, s14, s15, s16, s17}};
        for (int h = 0; h < halves; h++) {
          const int32_t j0 = jb + 16 * h;
          const __m512i columnV = _mm512_add_epi32(laneV, _mm512_set1_epi32(j0));
          const __mmask16 valid = _mm512_cmplt_epi32_mask(columnV, nbV);
          __m512i cb = _mm512_loadu_si512((const void *)(colBest + j0));
          __m512i cr = _mm512_loadu_si512((const void *)(colRow + j0));
          const __m512i offset = _mm512_slli_epi32(_mm512_loadu_si512((const void *)(columnSums + j0)), 7);
          for (int k = 0; k < live; k++) {
            const __m512i d = _mm512_mask_blend_epi32(valid, minV, _mm512_sub_epi32(acc[h][k], offset));
            const __m512i rowBest = _mm512_loadu_si512((const void *)best[k]);
            const __m512i rowSecond = _mm512_loadu_si512((const void *)second[k]);
            const __m512i rowIndex = _mm512_loadu_si512((const void *)index[k]);
            const __mmask16 gt = _mm512_cmpgt_epi32_mask(d, rowBest);
            _mm512_storeu_si512((void *)second[k], _mm512_mask_blend_epi32(gt, _mm512_max_epi32(rowSecond, d), rowBest));
            _mm512_storeu_si512((void *)best[k], _mm512_max_epi32(rowBest, d));
            _mm512_storeu_si512((void *)index[k], _mm512_mask_blend_epi32(gt, rowIndex, columnV));
            const __mmask16 above = _mm512_cmpgt_epi32_mask(d, cb);
            cb = _mm512_max_epi32(cb, d);
            cr = _mm512_mask_blend_epi32(above, cr, _mm512_set1_epi32(i + k));
          }
          _mm512_storeu_si512((void *)(colBest + j0), cb);
          _mm512_storeu_si512((void *)(colRow + j0), cr);
        }
      }
      for (int k = 0; k < live; k++) finish_row16(best[k], second[k], index[k], rows, na, i + k);
    }
  }
}

// Four rows of a at a time against 16 columns of b, as two 256-bit vectors of 8 column pairs each (eight independent
// sums); each row's 8 lanes see columns jb + l, then jb + 8 + l, so every lane still meets its columns in ascending
// order. The rows' lanes are kept in memory between blocks, as in the AVX-512 variant.
__attribute__((target("avx2"))) static void nearest_avx2(const uint8_t *a, int32_t na, int32_t frames,
                                                         const uint8_t *bBytes, int32_t nb, int32_t nbPad, int32_t dims,
                                                         int32_t *out) {
  const int16_t *b = (const int16_t *)bBytes;
  const int32_t pairs = dims / 2;
  const __m256i minV = _mm256_set1_epi32(INT32_MIN);
  const __m256i laneV = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i nbV = _mm256_set1_epi32(nb);
  for (int32_t f = 0; f < frames; f++) {
    const frame_output frame = start_frame(out, f, na, nbPad);
    int32_t *const rows = frame.rows, *const colBest = frame.colBest, *const colRow = frame.colRow;
    const uint8_t *block = a + (size_t)f * na * dims * 2;
    for (int32_t i = 0; i < na; i += 4) {
      const uint8_t *r[4];
      const int live = row_group(block, i, na, (size_t)dims * 2, 4, r);
      int32_t best[4][8], second[4][8], index[4][8];
      for (int k = 0; k < 4; k++) {
        _mm256_storeu_si256((__m256i *)best[k], minV);
        _mm256_storeu_si256((__m256i *)second[k], minV);
        _mm256_storeu_si256((__m256i *)index[k], _mm256_set1_epi32(-1));
      }
      for (int32_t jb = 0; jb < nbPad; jb += 16) {
        __m256i s00 = _mm256_setzero_si256(), s01 = _mm256_setzero_si256(), s02 = _mm256_setzero_si256();
        __m256i s03 = _mm256_setzero_si256(), s10 = _mm256_setzero_si256(), s11 = _mm256_setzero_si256();
        __m256i s12 = _mm256_setzero_si256(), s13 = _mm256_setzero_si256();
        const int16_t *w = b + (size_t)jb * 2;
        for (int32_t p = 0; p < pairs; p++, w += (size_t)nbPad * 2) {
          const __m256i c0 = _mm256_loadu_si256((const __m256i *)w);
          const __m256i c1 = _mm256_loadu_si256((const __m256i *)(w + 16));
          const __m256i x0 = _mm256_set1_epi32(load_pair(r[0] + 4 * p));
          s00 = _mm256_add_epi32(s00, _mm256_madd_epi16(c0, x0));
          s10 = _mm256_add_epi32(s10, _mm256_madd_epi16(c1, x0));
          const __m256i x1 = _mm256_set1_epi32(load_pair(r[1] + 4 * p));
          s01 = _mm256_add_epi32(s01, _mm256_madd_epi16(c0, x1));
          s11 = _mm256_add_epi32(s11, _mm256_madd_epi16(c1, x1));
          const __m256i x2 = _mm256_set1_epi32(load_pair(r[2] + 4 * p));
          s02 = _mm256_add_epi32(s02, _mm256_madd_epi16(c0, x2));
          s12 = _mm256_add_epi32(s12, _mm256_madd_epi16(c1, x2));
          const __m256i x3 = _mm256_set1_epi32(load_pair(r[3] + 4 * p));
          s03 = _mm256_add_epi32(s03, _mm256_madd_epi16(c0, x3));
          s13 = _mm256_add_epi32(s13, _mm256_madd_epi16(c1, x3));
        }
        const __m256i acc[2][4] = {{s00, s01, s02, s03}, {s10, s11, s12, s13}};
        for (int half = 0; half < 2; half++) {
          const int32_t j0 = jb + 8 * half;
          const __m256i columnV = _mm256_add_epi32(laneV, _mm256_set1_epi32(j0));
          const __m256i valid = _mm256_cmpgt_epi32(nbV, columnV);
          __m256i cb = _mm256_loadu_si256((const __m256i *)(colBest + j0));
          __m256i cr = _mm256_loadu_si256((const __m256i *)(colRow + j0));
          for (int k = 0; k < live; k++) {
            const __m256i d = _mm256_blendv_epi8(minV, acc[half][k], valid);
            const __m256i rowBest = _mm256_loadu_si256((const __m256i *)best[k]);
            const __m256i rowSecond = _mm256_loadu_si256((const __m256i *)second[k]);
            const __m256i rowIndex = _mm256_loadu_si256((const __m256i *)index[k]);
            const __m256i gt = _mm256_cmpgt_epi32(d, rowBest);
            _mm256_storeu_si256((__m256i *)second[k], _mm256_blendv_epi8(_mm256_max_epi32(rowSecond, d), rowBest, gt));
            _mm256_storeu_si256((__m256i *)best[k], _mm256_max_epi32(rowBest, d));
            _mm256_storeu_si256((__m256i *)index[k], _mm256_blendv_epi8(rowIndex, columnV, gt));
            const __m256i above = _mm256_cmpgt_epi32(d, cb);
            cb = _mm256_max_epi32(cb, d);
            cr = _mm256_blendv_epi8(cr, _mm256_set1_epi32(i + k), above);
          }
          _mm256_storeu_si256((__m256i *)(colBest + j0), cb);
          _mm256_storeu_si256((__m256i *)(colRow + j0), cr);
        }
      }
      for (int k = 0; k < live; k++) finish_row(best[k], second[k], index[k], 8, rows, na, i + k);
    }
  }
}


// The one-point RANSAC of the pair matcher's geometric check (pair-matcher.ts, bestAnchorInliers): for each tentative
// match m in turn (the anchor), how many matches n agree with the similarity transform it predicts, and the first anchor
// with the most. The same double-precision operations, in the same order, as agreeingWithAnchor, lane by lane (IEEE
// adds, multiplies, square roots and ordered comparisons; built without contracting them into fused multiply-adds), so
// each count is the JavaScript one exactly. The per-anchor products (scale x cos, ...) are computed once, as there.
typedef struct {
  const double *scales, *logScales, *ax, *ay, *bx, *by;
  int32_t count;
  double cosRotation, sinRotation, logTolerance, tolerancePx, toleranceRelative;
} anchor_input;

__attribute__((target("avx512f"))) static int32_t best_anchor_avx512(const anchor_input *in) {
  const __m512d logTolerance = _mm512_set1_pd(in->logTolerance);
  const __m512d tolerancePx = _mm512_set1_pd(in->tolerancePx);
  int32_t bestAnchor = -1, bestCount = 0;
  for (int32_t m = 0; m < in->count; m++) {
    const double scale = in->scales[m];
    const __m512d cosV = _mm512_set1_pd(scale * in->cosRotation);
    const __m512d sinV = _mm512_set1_pd(scale * in->sinRotation);
    const __m512d relative = _mm512_set1_pd(in->toleranceRelative * scale);
    const __m512d logScale = _mm512_set1_pd(in->logScales[m]);
    const __m512d axm = _mm512_set1_pd(in->ax[m]), aym = _mm512_set1_pd(in->ay[m]);
    const __m512d bxm = _mm512_set1_pd(in->bx[m]), bym = _mm512_set1_pd(in->by[m]);
    int32_t agreeing = 0;
    for (int32_t n = 0; n < in->count; n += 8) {
      const __mmask8 live = in->count - n >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (in->count - n)) - 1);
      const __m512d logScales = _mm512_maskz_loadu_pd(live, in->logScales + n);
      // Not skipped: !(|Δ log scale| > tolerance), as the JavaScript's test is written (NaN is not skipped either).
      const __mmask8 near = _mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_sub_pd(logScales, logScale)), logTolerance, _CMP_NGT_UQ);
      const __m512d dx = _mm512_sub_pd(_mm512_maskz_loadu_pd(live, in->ax + n), axm);
      const __m512d dy = _mm512_sub_pd(_mm512_maskz_loadu_pd(live, in->ay + n), aym);
      const __m512d px = _mm512_sub_pd(_mm512_add_pd(bxm, _mm512_mul_pd(cosV, dx)), _mm512_mul_pd(sinV, dy));
      const __m512d py = _mm512_add_pd(_mm512_add_pd(bym, _mm512_mul_pd(sinV, dx)), _mm512_mul_pd(cosV, dy));
      const __m512d distance = _mm512_sqrt_pd(_mm512_add_pd(_mm512_mul_pd(dx, dx), _mm512_mul_pd(dy, dy)));
      const __m512d tolerance = _mm512_add_pd(tolerancePx, _mm512_mul_pd(relative, distance));
      const __m512d ex = _mm512_sub_pd(px, _mm512_maskz_loadu_pd(live, in->bx + n));
      const __m512d ey = _mm512_sub_pd(py, _mm512_maskz_loadu_pd(live, in->by + n));
      const __mmask8 within = _mm512_cmp_pd_mask(_mm512_add_pd(_mm512_mul_pd(ex, ex), _mm512_mul_pd(ey, ey)),
                                                 _mm512_mul_pd(tolerance, tolerance), _CMP_LE_OQ);
      agreeing += __builtin_popcount((unsigned)(live & near & within));
    }
    if (agreeing > bestCount) {
      bestCount = agreeing;
      bestAnchor = m;
    }
  }
  return bestAnchor;
}

// The same in AVX2, four matches at a time (the last few loaded under a mask).
__attribute__((target("avx2"))) static int32_t best_anchor_avx2(const anchor_input *in) {
  const __m256d absMask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  const __m256d logTolerance = _mm256_set1_pd(in->logTolerance);
  const __m256d tolerancePx = _mm256_set1_pd(in->tolerancePx);
  const __m256i laneV = _mm256_setr_epi64x(0, 1, 2, 3);
  int32_t bestAnchor = -1, bestCount = 0;
  for (int32_t m = 0; m < in->count; m++) {
    const double scale = in->scales[m];
    const __m256d cosV = _mm256_set1_pd(scale * in->cosRotation);
    const __m256d sinV = _mm256_set1_pd(scale * in->sinRotation);
    const __m256d relative = _mm256_set1_pd(in->toleranceRelative * scale);
    const __m256d logScale = _mm256_set1_pd(in->logScales[m]);
    const __m256d axm = _mm256_set1_pd(in->ax[m]), aym = _mm256_set1_pd(in->ay[m]);
    const __m256d bxm = _mm256_set1_pd(in->bx[m]), bym = _mm256_set1_pd(in->by[m]);
    int32_t agreeing = 0;
    for (int32_t n = 0; n < in->count; n += 4) {
      const __m256i live = _mm256_cmpgt_epi64(_mm256_set1_epi64x(in->count - n), laneV);
      const __m256d logScales = _mm256_maskload_pd(in->logScales + n, live);
      const __m256d near = _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(logScales, logScale), absMask), logTolerance, _CMP_NGT_UQ);
      const __m256d dx = _mm256_sub_pd(_mm256_maskload_pd(in->ax + n, live), axm);
      const __m256d dy = _mm256_sub_pd(_mm256_maskload_pd(in->ay + n, live), aym);
      const __m256d px = _mm256_sub_pd(_mm256_add_pd(bxm, _mm256_mul_pd(cosV, dx)), _mm256_mul_pd(sinV, dy));
      const __m256d py = _mm256_add_pd(_mm256_add_pd(bym, _mm256_mul_pd(sinV, dx)), _mm256_mul_pd(cosV, dy));
      const __m256d distance = _mm256_sqrt_pd(_mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy)));
      const __m256d tolerance = _mm256_add_pd(tolerancePx, _mm256_mul_pd(relative, distance));
      const __m256d ex = _mm256_sub_pd(px, _mm256_maskload_pd(in->bx + n, live));
      const __m256d ey = _mm256_sub_pd(py, _mm256_maskload_pd(in->by + n, live));
      const __m256d within = _mm256_cmp_pd(_mm256_add_pd(_mm256_mul_pd(ex, ex), _mm256_mul_pd(ey, ey)),
                                           _mm256_mul_pd(tolerance, tolerance), _CMP_LE_OQ);
      const int bits = _mm256_movemask_pd(_mm256_and_pd(_mm256_and_pd(near, within), _mm256_castsi256_pd(live)));
      agreeing += __builtin_popcount((unsigned)bits);
    }
    if (agreeing > bestCount) {
      bestCount = agreeing;
      bestAnchor = m;
    }
  }
  return bestAnchor;
}


// The 1:N vocabulary's lookups (visual-words.ts `lookupWords`): for each 64-dimension int8 descriptor, its nearest
// coarse cells, its `wordsPer` nearest words among the fine centroids of its nearest `wordsPer` cells (cells in ascending
// order, centroids in order, the first of equal distances kept: assignWords' running nearest two), and each word's
// 64-bit signature (signatureIn: bit b set when the projection on axis b, the int8 projection's dot product over `scale`
// rounded to float32, exceeds the word's median). Distances are norm − 2 × dot in int32: the centroids' squared norms
// are integers below 2^21 and every distance below 2^24 in magnitude, so float32 holds them exactly and the integer
// comparison is the JavaScript's. Centroids (and projection axes) are laid out 16 rows a block, column pair by
// column pair: pair p of row 16b + l at ((32b + p) x 32 + 2l) int16.
#define WORD_DIMS 64
#define WORD_PAIRS (WORD_DIMS / 2)
#define SIGNATURE_AXES 64

// Four descriptors at a time (each widened to int16), so that each loaded block of rows serves four sums.
typedef void (*block_dots_fn)(const int16_t *const x[4], const int16_t *rows, int32_t blocks, int32_t *const out[4]);

// The four descriptors' dot products with `blocks` blocks of 16 laid-out rows, in row order.
__attribute__((target("avx512f,avx512vnni"))) static void block_dots_avx512(const int16_t *const x[4], const int16_t *rows,
                                                                             int32_t blocks, int32_t *const out[4]) {
  for (int32_t b = 0; b < blocks; b++) {
    const int16_t *w = rows + (size_t)b * WORD_PAIRS * 32;
    __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512(), s2 = _mm512_setzero_si512(), s3 = _mm512_setzero_si512();
    for (int p = 0; p < WORD_PAIRS; p++, w += 32) {
      const __m512i c = _mm512_loadu_si512((const void *)w);
      s0 = _mm512_dpwssd_epi32(s0, c, _mm512_set1_epi32(load_pair(x[0] + 2 * p)));
      s1 = _mm512_dpwssd_epi32(s1, c, _mm512_set1_epi32(load_pair(x[1] + 2 * p)));
      s2 = _mm512_dpwssd_epi32(s2, c, _mm512_set1_epi32(load_pair(x[2] + 2 * p)));
      s3 = _mm512_dpwssd_epi32(s3, c, _mm512_set1_epi32(load_pair(x[3] + 2 * p)));
    }
    _mm512_storeu_si512((void *)(out[0] + b * 16), s0);
    _mm512_storeu_si512((void *)(out[1] + b * 16), s1);
    _mm512_storeu_si512((void *)(out[2] + b * 16), s2);
    _mm512_storeu_si512((void *)(out[3] + b * 16), s3);
  }
}

// Each block's 16 rows as two 256-bit halves of 8 (vpmaddwd, then added).
__attribute__((target("avx2"))) static void block_dots_avx2(const int16_t *const x[4], const int16_t *rows, int32_t blocks,
                                                            int32_t *const out[4]) {
  for (int32_t b = 0; b < blocks; b++) {
    const int16_t *w = rows + (size_t)b * WORD_PAIRS * 32;
    __m256i s[4][2];
    for (int k = 0; k < 4; k++) s[k][0] = s[k][1] = _mm256_setzero_si256();
    for (int p = 0; p < WORD_PAIRS; p++, w += 32) {
      const __m256i c0 = _mm256_loadu_si256((const __m256i *)w);
      const __m256i c1 = _mm256_loadu_si256((const __m256i *)(w + 16));
      for (int k = 0; k < 4; k++) {
        const __m256i xp = _mm256_set1_epi32(load_pair(x[k] + 2 * p));
        s[k][0] = _mm256_add_epi32(s[k][0], _mm256_madd_epi16(c0, xp));
        s[k][1] = _mm256_add_epi32(s[k][1], _mm256_madd_epi16(c1, xp));
      }
    }
    for (int k = 0; k < 4; k++) {
      _mm256_storeu_si256((__m256i *)(out[k] + b * 16), s[k][0]);
      _mm256_storeu_si256((__m256i *)(out[k] + b * 16 + 8), s[k][1]);
    }
  }
}

// The most words a descriptor takes (visual-words.ts MAX_WORDS_PER_DESCRIPTOR).
#define MAX_WORDS 4

// The `k` nearest so far, nearest first (index −1 and INT32_MAX for none: every distance is below 2^24 in magnitude),
// updated in order with rows from..from + n − 1: the first of equal distances stays first (visual-words.ts nearestOf).
typedef struct {
  int32_t k;
  int32_t index[MAX_WORDS];
  int32_t distance[MAX_WORDS];
} nearest_few;

static void nearest_few_reset(nearest_few *near, int32_t k) {
  near->k = k;
  for (int32_t j = 0; j < MAX_WORDS; j++) {
    near->index[j] = -1;
    near->distance[j] = INT32_MAX;
  }
}

static void nearest_few_update(nearest_few *near, const int32_t *dots, int32_t n, const int32_t *norms, int32_t from) {
  const int32_t last = near->k - 1;
  for (int32_t j = 0; j < n; j++) {
    const int32_t distance = norms[from + j] - 2 * dots[j];
    if (distance >= near->distance[last]) continue;
    int32_t at = last;
    while (at > 0 && distance < near->distance[at - 1]) {
      near->distance[at] = near->distance[at - 1];
      near->index[at] = near->index[at - 1];
      at--;
    }
    near->distance[at] = distance;
    near->index[at] = from + j;
  }
}

typedef struct {
  const int8_t *descriptors;
  int32_t count, wordsPer, coarseRows, fineRows;
  const int16_t *coarse, *fine, *projection;
  const int32_t *coarseNorms, *fineNorms;
  double scale;
  const float *medians;
  uint16_t *words;
  uint32_t *signatures;
  int32_t *distances;
} lookup_input;

#define MAX_VOCABULARY_ROWS 4096

// The sums of four descriptors with `rowCount` laid-out rows, into out[k] (in scratch, rowCount apart): those at
// g..g + 3 of `order` (indices into the widened x; NULL for g, g + 1, ...), the last before `end` repeated past it.
// Returns how many are real.
static int dots_of_four(block_dots_fn dots, const int16_t *x, const int32_t *order, int32_t g, int32_t end,
                        const int16_t *rows, int32_t rowCount, int32_t *scratch, int32_t *out[4]) {
  const int16_t *xs[4];
  for (int k = 0; k < 4; k++) {
    const int32_t at = g + k < end ? g + k : end - 1;
    xs[k] = x + (size_t)(order ? order[at] : at) * WORD_DIMS;
    out[k] = scratch + (size_t)k * rowCount;
  }
  dots(xs, rows, rowCount / 16, out);
  return end - g < 4 ? end - g : 4;
}

static void lookup_words_with(block_dots_fn dots, const lookup_input *in, int16_t *x, int32_t *cells, int32_t *members,
                              nearest_few *words, int32_t *scratch) {
  const int32_t count = in->count, per = in->wordsPer;
  for (int32_t i = 0; i < count; i++)
    for (int d = 0; d < WORD_DIMS; d++) x[(size_t)i * WORD_DIMS + d] = in->descriptors[(size_t)i * WORD_DIMS + d];
  // Each descriptor's nearest `per` cells, from the coarse sums of four descriptors at a time.
  for (int32_t g = 0; g < count; g += 4) {
    int32_t *o[4];
    const int live = dots_of_four(dots, x, NULL, g, count, in->coarse, in->coarseRows, scratch, o);
    for (int k = 0; k < live; k++) {
      nearest_few near;
      nearest_few_reset(&near, per);
      nearest_few_update(&near, o[k], in->coarseRows, in->coarseNorms, 0);
      for (int32_t c = 0; c < per; c++) cells[(size_t)(g + k) * per + c] = near.index[c];
    }
  }
  // The descriptors of each cell (counting sort: cells ascending, descriptors in order), each cell's fine centroids
  // read once for all of them; every descriptor meets its cells in ascending order, as assignWords' scan does.
  int32_t start[MAX_VOCABULARY_ROWS + 1];
  memset(start, 0, sizeof(int32_t) * (in->coarseRows + 1));
  for (int32_t j = 0; j < count * per; j++) start[cells[j] + 1]++;
  for (int32_t c = 0; c < in->coarseRows; c++) start[c + 1] += start[c];
  int32_t placed[MAX_VOCABULARY_ROWS];
  memcpy(placed, start, sizeof(int32_t) * in->coarseRows);
  for (int32_t j = 0; j < count * per; j++) members[placed[cells[j]]++] = j / per;
  for (int32_t i = 0; i < count; i++) nearest_few_reset(&words[i], per);
  for (int32_t c = 0; c < in->coarseRows; c++) {
    const int32_t from = c * in->fineRows;
    const int16_t *rows = in->fine + (size_t)from * WORD_DIMS;
    for (int32_t g = start[c]; g < start[c + 1]; g += 4) {
      int32_t *o[4];
      const int live = dots_of_four(dots, x, members, g, start[c + 1], rows, in->fineRows, scratch, o);
      for (int k = 0; k < live; k++) nearest_few_update(&words[members[g + k]], o[k], in->fineRows, in->fineNorms, from);
    }
  }
  // The projections, four descriptors at a time, and each word's signature.
  for (int32_t g = 0; g < count; g += 4) {
    int32_t *o[4];
    const int live = dots_of_four(dots, x, NULL, g, count, in->projection, SIGNATURE_AXES, scratch, o);
    for (int k = 0; k < live; k++) {
      const int32_t i = g + k;
      float projected[SIGNATURE_AXES];
      for (int b = 0; b < SIGNATURE_AXES; b++) projected[b] = (float)((double)o[k][b] / in->scale);
      for (int w = 0; w < per; w++) {
        const size_t at = (size_t)i * per + w;
        const int32_t chosen = words[i].index[w];
        const float *median = in->medians + (size_t)chosen * SIGNATURE_AXES;
        uint32_t low = 0, high = 0;
        for (int b = 0; b < 32; b++) low |= (uint32_t)(projected[b] > median[b]) << b;
        for (int b = 0; b < 32; b++) high |= (uint32_t)(projected[32 + b] > median[32 + b]) << b;
        in->words[at] = (uint16_t)chosen;
        in->distances[at] = words[i].distance[w];
        in->signatures[2 * at] = low;
        in->signatures[2 * at + 1] = high;
      }
    }
  }
}

// The 1:N first stage's scan of one posting list (`scan` in lib/biometrics/simd/posting-kernel.wat, on
// that kernel's memory and in its layout): every posting within `threshold` bits of the query signature appends its
// vote to the log, in the list's order, the same 16 bytes the WebAssembly kernel writes (image row; stamp key | the
// orientation bin of the angle change; weight x the Hamming weight of its distance, one double multiply). The chain's
// blocks are checked to lie in the memory and the log's room to hold every posting of a block before it is read;
// returns the log's new count, or -1 where a block or the log would fall outside it.
typedef struct {
  uint8_t *memory;
  uint64_t length;
  uint32_t block;
  uint64_t query;
  int32_t angle, stampKey, threshold, angleShift;
  double weight;
  uint32_t log;
  int64_t count;
} scan_input;

// The block's header read and checked (its postings and the log's room for them inside the memory): its count, or -1.
static int64_t scan_block_header(const scan_input *in, uint32_t block, int64_t count, uint32_t *capacity) {
  if ((uint64_t)block + 8 > in->length) return -1;
  uint16_t held, cap;
  memcpy(&held, in->memory + block + 4, 2);
  memcpy(&cap, in->memory + block + 6, 2);
  if (held > cap || (uint64_t)block + 8 + 13 * (uint64_t)cap > in->length ||
      (uint64_t)in->log + ((uint64_t)count + held) * 16 > in->length)
    return -1;
  *capacity = cap;
  return held;
}

// Posting j of the block (its row and orientation at their places for a block of `capacity`) voting at log slot `count`.
static inline void scan_vote(const scan_input *in, const uint8_t *blockAt, uint32_t capacity, uint32_t j, uint32_t distance,
                             int64_t count) {
  const uint8_t *memory = in->memory;
  int32_t row;
  double weight;
  memcpy(&row, blockAt + 8 + 8 * (size_t)capacity + 4 * (size_t)j, 4);
  memcpy(&weight, memory + 8 * (size_t)distance, 8);
  const int32_t key = in->stampKey | (int32_t)((uint32_t)((in->angle - blockAt[8 + 12 * (size_t)capacity + j]) & 255) >> in->angleShift);
  const double vote = in->weight * weight;
  uint8_t *entry = in->memory + in->log + (size_t)count * 16;
  memcpy(entry, &row, 4);
  memcpy(entry + 4, &key, 4);
  memcpy(entry + 8, &vote, 8);
}

__attribute__((target("popcnt"))) static int64_t scan_postings_scalar(const scan_input *in) {
  int64_t count = in->count;
  uint64_t seen = 0;
  for (uint32_t block = in->block; block != 0;) {
    uint32_t capacity;
    const int64_t held = scan_block_header(in, block, count, &capacity);
    // A chain longer than the memory could hold is not a list (a cycle): refused rather than followed for ever.
    if (held < 0 || (seen += capacity + 1) > in->length / 8) return -1;
    const uint8_t *blockAt = in->memory + block;
    for (uint32_t j = 0; j < (uint32_t)held; j++) {
      uint64_t signature;
      memcpy(&signature, blockAt + 8 + 8 * (size_t)j, 8);
      const uint32_t distance = (uint32_t)__builtin_popcountll(signature ^ in->query);
      if (distance <= (uint32_t)in->threshold) scan_vote(in, blockAt, capacity, j, distance, count++);
    }
    memcpy(&block, blockAt, 4);
  }
  return count;
}

// Signatures read this many postings (2 KB) ahead of the scan, and the next block's first lines as a block starts: a
// list is a chain of blocks, which the hardware prefetcher does not follow (scratch, one thread, 50,000 pets, the fast
// pass's lookups: 100-105 -> 87-88 ms a search, taken in turn).
#define PREFETCH_AHEAD 256
// Eight signatures an instruction (vpopcntq); the postings within the threshold vote in the list's order.
__attribute__((target("avx512f,avx512vpopcntdq"))) static int64_t scan_postings_avx512(const scan_input *in) {
  int64_t count = in->count;
  uint64_t seen = 0;
  const __m512i query = _mm512_set1_epi64((long long)in->query);
  const __m512i threshold = _mm512_set1_epi64(in->threshold);
  for (uint32_t block = in->block; block != 0;) {
    uint32_t capacity;
    const int64_t held = scan_block_header(in, block, count, &capacity);
    if (held < 0 || (seen += capacity + 1) > in->length / 8) return -1;
    const uint8_t *blockAt = in->memory + block;
    uint32_t next;
    memcpy(&next, blockAt, 4);
    if (next != 0 && (uint64_t)next + 256 <= in->length) {
      for (int line = 0; line < 4; line++) _mm_prefetch((const char *)in->memory + next + 64 * line, _MM_HINT_T0);
    }
    for (uint32_t j = 0; j < (uint32_t)held; j += 8) {
      if (j + PREFETCH_AHEAD < (uint32_t)held) _mm_prefetch((const char *)blockAt + 8 + 8 * (size_t)(j + PREFETCH_AHEAD), _MM_HINT_T0);
      const __mmask8 present = (uint32_t)held - j >= 8 ? 0xff : (__mmask8)((1u << ((uint32_t)held - j)) - 1);
      const __m512i signatures = _mm512_maskz_loadu_epi64(present, blockAt + 8 + 8 * (size_t)j);
      const __m512i distances = _mm512_popcnt_epi64(_mm512_xor_si512(signatures, query));
      __mmask8 near = _mm512_mask_cmple_epu64_mask(present, distances, threshold);
      if (!near) continue;
      uint64_t each[8];
      _mm512_storeu_si512((void *)each, distances);
      for (; near; near &= (__mmask8)(near - 1)) {
        const uint32_t k = (uint32_t)__builtin_ctz(near);
        scan_vote(in, blockAt, capacity, j + k, (uint32_t)each[k], count++);
      }
    }
    memcpy(&block, blockAt, 4);
  }
  return count;
}

// `finishProbeImage`, the first stage's summing of one probe image's logged votes (`finish` in posting-kernel.wat, on
// its memory and in its layout; the arithmetic is its own: each vote added in double to a float bin, a row's best pair
// of adjacent bins in double): the votes partitioned by window of rows into `sorted`, each window's rows summed in the
// histogram region (a row's first vote of each stamp only), each live row's best pair of bins kept as its pet's best or
// second score, and the pets scored for the first time listed at `petTouched`. Every region is checked to lie in the
// memory, and every row and pet read from it to fall inside its region; returns how many pets were listed, or -1.
typedef struct {
  uint8_t *memory;
  uint64_t length;
  uint32_t log, count, sorted, cursors, windows, windowShift, histograms, flags, windowRows, binsLog2, rowPet, petBest,
      petTouched;
} finish_input;

static int region_fits(const finish_input *in, uint32_t at, uint64_t bytes) {
  return (uint64_t)at + bytes <= in->length;
}

// A row's best pair of adjacent bins of 16 (the last bin's pair wraps to the first), at least 0: the float bins widened
// to double and added in pairs, as the scalar loop adds them; the largest of the sums does not depend on the order.
__attribute__((target("avx512f"))) static double best_pair16_avx512(const float *histogram) {
  const __m512 bins = _mm512_loadu_ps(histogram);
  const __m512 next = _mm512_permutexvar_ps(_mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0), bins);
  const __m512d low = _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(bins)), _mm512_cvtps_pd(_mm512_castps512_ps256(next)));
  const __m512d high = _mm512_add_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(bins), 1))),
                                     _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(next), 1))));
  const double best = _mm512_reduce_max_pd(_mm512_max_pd(low, high));
  return best > 0 ? best : 0;
}

static double best_pair(const float *histogram, uint32_t bins, int vector) {
  if (vector && bins == 16) return best_pair16_avx512(histogram);
  double best = 0;
  for (uint32_t b = 0; b < bins; b++) {
    const double pair = (double)histogram[b] + (double)histogram[(b + 1) & (bins - 1)];
    if (pair > best) best = pair;
  }
  return best;
}

static int64_t finish_probe_image(const finish_input *in, int vector) {
  uint8_t *memory = in->memory;
  const uint32_t windowRowCount = 1u << in->windowShift, bins = 1u << in->binsLog2, mask = windowRowCount - 1;
  const uint64_t rows = (uint64_t)in->windows << in->windowShift;
  if (!region_fits(in, in->log, (uint64_t)in->count * 16) || !region_fits(in, in->sorted, (uint64_t)in->count * 16) ||
      !region_fits(in, in->cursors, (uint64_t)in->windows * 4) ||
      !region_fits(in, in->histograms, (uint64_t)windowRowCount * bins * 4) ||
      !region_fits(in, in->flags, (uint64_t)windowRowCount * 4) || !region_fits(in, in->windowRows, (uint64_t)windowRowCount * 4) ||
      !region_fits(in, in->rowPet, rows * 4) || in->log % 4 != 0 || in->sorted % 4 != 0 || in->cursors % 4 != 0 ||
      in->histograms % 4 != 0 || in->flags % 4 != 0 || in->windowRows % 4 != 0 || in->rowPet % 4 != 0 ||
      in->petBest % 8 != 0 || in->petTouched % 4 != 0)
    return -1;
  const uint8_t *log = memory + in->log;
  uint8_t *sorted = memory + in->sorted;
  uint32_t *cursors = (uint32_t *)(memory + in->cursors);
  float *histograms = (float *)(memory + in->histograms);
  int32_t *flags = (int32_t *)(memory + in->flags);
  int32_t *windowRows = (int32_t *)(memory + in->windowRows);
  const int32_t *rowPet = (const int32_t *)(memory + in->rowPet);
  // Votes a window, then each window's first slot; each vote to its window's next slot, in the order cast.
  memset(cursors, 0, (size_t)in->windows * 4);
  for (uint32_t i = 0; i < in->count; i++) {
    uint32_t row;
    memcpy(&row, log + (size_t)i * 16, 4);
    if ((uint64_t)row >= rows) return -1;
    cursors[row >> in->windowShift]++;
  }
  uint32_t sum = 0;
  for (uint32_t w = 0; w < in->windows; w++) {
    const uint32_t c = cursors[w];
    cursors[w] = sum;
    sum += c;
  }
  for (uint32_t i = 0; i < in->count; i++) {
    uint32_t row;
    memcpy(&row, log + (size_t)i * 16, 4);
    memcpy(sorted + (size_t)cursors[row >> in->windowShift]++ * 16, log + (size_t)i * 16, 16);
  }
  int64_t touched = 0;
  for (uint32_t w = 0, start = 0; w < in->windows; start = cursors[w], w++) {
    const uint32_t stop = cursors[w];
    uint32_t k = 0;
    for (uint32_t i = start; i < stop; i++) {
      const uint8_t *vote = sorted + (size_t)i * 16;
      uint32_t row, key;
      double weight;
      memcpy(&row, vote, 4);
      memcpy(&key, vote + 4, 4);
      memcpy(&weight, vote + 8, 8);
      const uint32_t r = row & mask;
      const int32_t stamp = (int32_t)(key >> in->binsLog2);
      // Stamps count from 1 (0 marks a row the window has not touched): a 0 would list its row again and again.
      if (stamp == 0) return -1;
      // A later vote of the same stamp for this row is not counted (votes of one stamp are cast one after another).
      if (flags[r] == stamp) continue;
      float *histogram = histograms + ((size_t)r << in->binsLog2);
      if (flags[r] == 0) {
        windowRows[k++] = (int32_t)row;
        memset(histogram, 0, (size_t)bins * 4);
      }
      flags[r] = stamp;
      float *bin = histogram + (key & (bins - 1));
      *bin = (float)((double)*bin + weight);
    }
    for (uint32_t t = 0; t < k; t++) {
      const uint32_t row = (uint32_t)windowRows[t];
      flags[row & mask] = 0;
      const int32_t pet = rowPet[row];
      if (pet < 0) continue;
      const float *histogram = histograms + ((size_t)(row & mask) << in->binsLog2);
      const double best = best_pair(histogram, bins, vector);
      if (!region_fits(in, in->petBest, ((uint64_t)pet + 1) * 16) || !region_fits(in, in->petTouched, ((uint64_t)touched + 1) * 4))
        return -1;
      double *scores = (double *)(memory + in->petBest) + 2 * (size_t)pet;
      if (best > scores[0]) {
        if (scores[0] == 0) ((int32_t *)(memory + in->petTouched))[touched++] = pet;
        scores[1] = scores[0];
        scores[0] = best;
      } else if (best > scores[1]) {
        scores[1] = best;
      }
    }
  }
  return touched;
}

static int has_vector_popcount(void) {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq");
}

typedef struct {
  const char *name;
  // How `nearest` reads its matrices (the header): "quads" or "pairs".
  const char *layout;
  nearest_fn run;
  int32_t (*bestAnchor)(const anchor_input *in);
  block_dots_fn blockDots;
} variant;

static const variant kernel_variants[] = {
    {"avx512-vnni", "quads", nearest_avx512, best_anchor_avx512, block_dots_avx512},
    {"avx2", "pairs", nearest_avx2, best_anchor_avx2, block_dots_avx2}};
static const int kernel_variant_count = sizeof kernel_variants / sizeof kernel_variants[0];

// A typed array's data when it is of `type` and holds exactly `length` values (at least, when `atLeast`), else NULL.
static void *typed_array(napi_env env, napi_value value, napi_typedarray_type type, size_t length, int atLeast) {
  napi_typedarray_type actual;
  size_t actualLength;
  void *data;
  if (napi_get_typedarray_info(env, value, &actual, &actualLength, &data, NULL, NULL) != napi_ok || actual != type ||
      (atLeast ? actualLength < length : actualLength != length))
    return NULL;
  return data;
}

// nearest(variant, buffer, pa, na, frames, pt, nb, nbPad, dims, out): `variant` is an index into `variants`.
static napi_value nearest(napi_env env, napi_callback_info info) {
  napi_value args[10];
  if (!call_arguments(env, info, 10, args, "nearest takes 10 arguments")) return NULL;
  void *data = NULL;
  size_t length = 0;
  if (napi_get_arraybuffer_info(env, args[1], &data, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "nearest reads an ArrayBuffer");
    return NULL;
  }
  int32_t v[10];
  for (int k = 0; k < 10; k++) {
    if (k == 1) continue;
    if (napi_get_value_int32(env, args[k], &v[k]) != napi_ok || v[k] < 0) {
      napi_throw_type_error(env, NULL, "nearest takes non-negative integers");
      return NULL;
    }
  }
  const int32_t which = v[0], pa = v[2], na = v[3], frames = v[4], pt = v[5], nb = v[6], nbPad = v[7], dims = v[8],
                out = v[9];
  // Every byte the kernel reads or writes lies in the buffer: 64-bit arithmetic, so no product wraps around.
  const int quads = which < kernel_variant_count && strcmp(kernel_variants[which].layout, "quads") == 0;
  const uint64_t aEnd = (uint64_t)pa + (uint64_t)frames * na * dims * (quads ? 1 : 2);
  const uint64_t bEnd = (uint64_t)pt + (uint64_t)(dims / (quads ? 4 : 2)) * nbPad * 4 + (quads ? (uint64_t)nbPad * 4 : 0);
  const uint64_t outEnd = (uint64_t)out + (uint64_t)frames * (3 * (uint64_t)na + 2 * (uint64_t)nbPad) * 4;
  if (which >= kernel_variant_count || dims % 16 != 0 || nbPad % 16 != 0 || nb > nbPad || pa % 2 != 0 ||
      pt % 4 != 0 || out % 4 != 0 || aEnd > length || bEnd > length || outEnd > length) {
    napi_throw_range_error(env, NULL, "nearest: arguments outside the buffer or its layout");
    return NULL;
  }
  uint8_t *base = (uint8_t *)data;
  kernel_variants[which].run(base + pa, na, frames, base + pt, nb, nbPad, dims, (int32_t *)(base + out));
  return NULL;
}


// bestAnchor(variant, scales, logScales, ax, ay, bx, by, count, cosRotation, sinRotation, logTolerance, tolerancePx,
// toleranceRelative): the six arrays Float64Arrays of at least `count` values each.
static napi_value best_anchor(napi_env env, napi_callback_info info) {
  napi_value args[13];
  if (!call_arguments(env, info, 13, args, "bestAnchor takes 13 arguments")) return NULL;
  int32_t which, count;
  if (napi_get_value_int32(env, args[0], &which) != napi_ok || which < 0 || which >= kernel_variant_count ||
      napi_get_value_int32(env, args[7], &count) != napi_ok || count < 0) {
    napi_throw_range_error(env, NULL, "bestAnchor: bad variant or count");
    return NULL;
  }
  const double *arrays[6];
  for (int k = 0; k < 6; k++) {
    if (!(arrays[k] = typed_array(env, args[1 + k], napi_float64_array, (size_t)count, 1))) {
      napi_throw_type_error(env, NULL, "bestAnchor reads six Float64Arrays of at least count values");
      return NULL;
    }
  }
  double figures[5];
  for (int k = 0; k < 5; k++) {
    if (napi_get_value_double(env, args[8 + k], &figures[k]) != napi_ok) {
      napi_throw_type_error(env, NULL, "bestAnchor takes numbers");
      return NULL;
    }
  }
  const anchor_input in = {arrays[0], arrays[1], arrays[2], arrays[3], arrays[4],  arrays[5], count,
                           figures[0], figures[1], figures[2], figures[3], figures[4]};
  napi_value result;
  napi_create_int32(env, kernel_variants[which].bestAnchor(&in), &result);
  return result;
}


// layQuads(buffer, src, rows, dims, dst): the `rows` rows of `dims` int8 at src laid out for the quads layout from dst
// on (quad q of row j at dst + (q x rows + j) x 4, then each row's sum as int32), both in the buffer, dst a multiple of 4.
static napi_value lay_quads(napi_env env, napi_callback_info info) {
  napi_value args[5];
  if (!call_arguments(env, info, 5, args, "layQuads takes 5 arguments")) return NULL;
  void *data = NULL;
  size_t length = 0;
  if (napi_get_arraybuffer_info(env, args[0], &data, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "layQuads reads an ArrayBuffer");
    return NULL;
  }
  int32_t v[5];
  for (int k = 1; k < 5; k++) {
    if (napi_get_value_int32(env, args[k], &v[k]) != napi_ok || v[k] < 0) {
      napi_throw_type_error(env, NULL, "layQuads takes non-negative integers");
      return NULL;
    }
  }
  const int32_t src = v[1], rows = v[2], dims = v[3], dst = v[4];
  const uint64_t srcEnd = (uint64_t)src + (uint64_t)rows * dims, dstEnd = (uint64_t)dst + (uint64_t)rows * dims + (uint64_t)rows * 4;
  if (dims % 4 != 0 || dst % 4 != 0 || srcEnd > length || dstEnd > length || ((uint64_t)src < dstEnd && (uint64_t)dst < srcEnd)) {
    napi_throw_range_error(env, NULL, "layQuads: arguments outside the buffer or overlapping");
    return NULL;
  }
  const int8_t *from = (const int8_t *)data + src;
  int8_t *to = (int8_t *)data + dst;
  int32_t *sums = (int32_t *)(to + (size_t)rows * dims);
  for (int32_t j = 0; j < rows; j++) {
    const int8_t *row = from + (size_t)j * dims;
    int32_t sum = 0;
    for (int32_t d = 0; d < dims; d++) sum += row[d];
    sums[j] = sum;
    for (int32_t q = 0; q < dims / 4; q++) memcpy(to + ((size_t)q * rows + j) * 4, row + 4 * q, 4);
  }
  return NULL;
}

// lookupWords(variant, descriptors, count, wordsPer, coarse, fine, fineRows, coarseNorms, fineNorms, projection, scale,
// medians, words, signatures, distances): descriptors an Int8Array of at least count x 64; wordsPer 1 to MAX_WORDS;
// coarse, fine and projection Int16Arrays laid out as above (coarseRows, coarseRows x fineRows and 64 rows, coarseRows
// from coarseNorms, an Int32Array, as is fineNorms); medians a Float32Array of 64 a word; words (Uint16Array),
// signatures (Uint32Array) and distances (Int32Array: each word's norm − 2 x dot) receive count x wordsPer, twice that
// and count x wordsPer.
static napi_value lookup_words(napi_env env, napi_callback_info info) {
  napi_value args[15];
  if (!call_arguments(env, info, 15, args, "lookupWords takes 15 arguments")) return NULL;
  int32_t which, count, wordsPer, fineRows;
  double scale;
  if (napi_get_value_int32(env, args[0], &which) != napi_ok || napi_get_value_int32(env, args[2], &count) != napi_ok ||
      napi_get_value_int32(env, args[3], &wordsPer) != napi_ok || napi_get_value_int32(env, args[6], &fineRows) != napi_ok ||
      napi_get_value_double(env, args[10], &scale) != napi_ok) {
    napi_throw_type_error(env, NULL, "lookupWords takes integers and a number");
    return NULL;
  }
  napi_typedarray_type type;
  size_t coarseRows = 0;
  if (napi_get_typedarray_info(env, args[7], &type, &coarseRows, NULL, NULL, NULL) != napi_ok) coarseRows = 0;
  if (which < 0 || which >= kernel_variant_count || count < 0 || wordsPer < 1 || wordsPer > MAX_WORDS || (size_t)wordsPer > coarseRows || fineRows <= 0 ||
      fineRows % 16 != 0 || fineRows > MAX_VOCABULARY_ROWS || coarseRows < 2 || coarseRows % 16 != 0 ||
      coarseRows > MAX_VOCABULARY_ROWS || !(scale > 0)) {
    napi_throw_range_error(env, NULL, "lookupWords: bad variant, count, words a descriptor, vocabulary shape or scale");
    return NULL;
  }
  const size_t words = coarseRows * (size_t)fineRows;
  lookup_input in = {
      .descriptors = typed_array(env, args[1], napi_int8_array, (size_t)count * WORD_DIMS, 1),
      .count = count,
      .wordsPer = wordsPer,
      .coarseRows = (int32_t)coarseRows,
      .fineRows = fineRows,
      .coarse = typed_array(env, args[4], napi_int16_array, coarseRows * WORD_DIMS, 0),
      .fine = typed_array(env, args[5], napi_int16_array, words * WORD_DIMS, 0),
      .projection = typed_array(env, args[9], napi_int16_array, SIGNATURE_AXES * WORD_DIMS, 0),
      .coarseNorms = typed_array(env, args[7], napi_int32_array, coarseRows, 0),
      .fineNorms = typed_array(env, args[8], napi_int32_array, words, 0),
      .scale = scale,
      .medians = typed_array(env, args[11], napi_float32_array, words * SIGNATURE_AXES, 0),
      .words = typed_array(env, args[12], napi_uint16_array, (size_t)count * wordsPer, 1),
      .signatures = typed_array(env, args[13], napi_uint32_array, (size_t)count * wordsPer * 2, 1),
      .distances = typed_array(env, args[14], napi_int32_array, (size_t)count * wordsPer, 1),
  };
  if (!in.descriptors || !in.coarse || !in.fine || !in.projection || !in.coarseNorms || !in.fineNorms || !in.medians ||
      !in.words || !in.signatures || !in.distances) {
    napi_throw_type_error(env, NULL, "lookupWords: an array is not of its type or length");
    return NULL;
  }
  // Working memory: the descriptors widened, each one's cells, the cells' members, each one's nearest words, and the
  // sums of four descriptors.
  const size_t rowsMax = coarseRows > (size_t)fineRows ? coarseRows : (size_t)fineRows;
  int16_t *x = malloc(((size_t)count + 1) * WORD_DIMS * sizeof(int16_t));
  int32_t *cells = malloc(((size_t)count * wordsPer + 1) * sizeof(int32_t));
  int32_t *members = malloc(((size_t)count * wordsPer + 1) * sizeof(int32_t));
  nearest_few *nearest = malloc(((size_t)count + 1) * sizeof(nearest_few));
  int32_t *scratch = malloc(4 * (rowsMax > SIGNATURE_AXES ? rowsMax : SIGNATURE_AXES) * sizeof(int32_t));
  if (!x || !cells || !members || !nearest || !scratch) {
    napi_throw_error(env, NULL, "lookupWords: out of memory");
  } else {
    lookup_words_with(kernel_variants[which].blockDots, &in, x, cells, members, nearest, scratch);
  }
  free(x);
  free(cells);
  free(members);
  free(nearest);
  free(scratch);
  return NULL;
}

// scanLookups(variant, buffer, heads, lengths, signatures, angles, weights, stampKeys, size, from, threshold, angleShift,
// log, capacity, count, counts): a pass's lookups from `from` on, in order, each one `scan` of posting-kernel.wat on its
// memory (the buffer): lookup k reads the list at heads[k] (lengths[k] postings) with the query signatures[2k],
// signatures[2k + 1] (low, high), angles[k], weights[k] and stampKeys[k], appends its votes to the log (room for
// `capacity` votes, `count` held) and leaves their number in counts[k]. Stops before a lookup whose list could overflow
// the log, and returns the lookup it stopped at (`size` when all are done). The next lookup's list is prefetched while
// one is scanned: lists are apart in memory, and a search's first blocks would otherwise each wait on memory.
static napi_value scan_lookups(napi_env env, napi_callback_info info) {
  napi_value args[16];
  if (!call_arguments(env, info, 16, args, "scanLookups takes 16 arguments")) return NULL;
  void *data = NULL;
  size_t length = 0;
  if (napi_get_arraybuffer_info(env, args[1], &data, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "scanLookups reads an ArrayBuffer");
    return NULL;
  }
  uint32_t which, size, from, threshold, angleShift, log, capacity, count;
  if (napi_get_value_uint32(env, args[0], &which) != napi_ok || napi_get_value_uint32(env, args[8], &size) != napi_ok ||
      napi_get_value_uint32(env, args[9], &from) != napi_ok || napi_get_value_uint32(env, args[10], &threshold) != napi_ok ||
      napi_get_value_uint32(env, args[11], &angleShift) != napi_ok || napi_get_value_uint32(env, args[12], &log) != napi_ok ||
      napi_get_value_uint32(env, args[13], &capacity) != napi_ok || napi_get_value_uint32(env, args[14], &count) != napi_ok) {
    napi_throw_type_error(env, NULL, "scanLookups takes integers");
    return NULL;
  }
  const uint32_t *heads = typed_array(env, args[2], napi_int32_array, size, 1);
  const int32_t *lengths = typed_array(env, args[3], napi_int32_array, size, 1);
  const uint32_t *signatures = typed_array(env, args[4], napi_uint32_array, 2 * (size_t)size, 1);
  const uint8_t *angles = typed_array(env, args[5], napi_uint8_array, size, 1);
  const double *weights = typed_array(env, args[6], napi_float64_array, size, 1);
  const int32_t *stampKeys = typed_array(env, args[7], napi_int32_array, size, 1);
  int32_t *counts = typed_array(env, args[15], napi_int32_array, size, 1);
  if (!heads || !lengths || !signatures || !angles || !weights || !stampKeys || !counts) {
    napi_throw_type_error(env, NULL, "scanLookups: an array is not of its type or length");
    return NULL;
  }
  if (which >= (uint32_t)kernel_variant_count || threshold > 64 || angleShift > 8 || length < 65 * 8 || from > size ||
      count > capacity || (uint64_t)log + (uint64_t)capacity * 16 > length) {
    napi_throw_range_error(env, NULL, "scanLookups: bad variant, threshold, angle shift, start or log");
    return NULL;
  }
  const int vector = which == 0 && has_vector_popcount();
  uint32_t k = from;
  for (; k < size; k++) {
    if (lengths[k] < 0 || (uint64_t)count + (uint64_t)lengths[k] > capacity) break;
    if (k + 1 < size && heads[k + 1] != heads[k] && (uint64_t)heads[k + 1] + 256 <= length) {
      for (int line = 0; line < 4; line++) _mm_prefetch((const char *)data + heads[k + 1] + 64 * line, _MM_HINT_T0);
    }
    const scan_input in = {.memory = (uint8_t *)data, .length = length, .block = heads[k],
                           .query = (uint64_t)signatures[2 * k] | ((uint64_t)signatures[2 * k + 1] << 32),
                           .angle = angles[k], .stampKey = stampKeys[k], .threshold = (int32_t)threshold,
                           .angleShift = (int32_t)angleShift, .weight = weights[k], .log = log, .count = count};
    const int64_t after = vector ? scan_postings_avx512(&in) : scan_postings_scalar(&in);
    if (after < 0) {
      napi_throw_range_error(env, NULL, "scanLookups: a block or the log outside the buffer");
      return NULL;
    }
    counts[k] = (int32_t)(after - count);
    count = (uint32_t)after;
  }
  napi_value result;
  napi_create_uint32(env, k, &result);
  return result;
}

// finishProbeImage(variant, buffer, log, count, sorted, cursors, windows, windowShift, histograms, flags, windowRows, binsLog2,
// rowPet, petBest, petTouched): `finish` of posting-kernel.wat on its memory (the buffer); returns how many pets it listed.
static napi_value finish_probe(napi_env env, napi_callback_info info) {
  napi_value args[15];
  if (!call_arguments(env, info, 15, args, "finishProbeImage takes 15 arguments")) return NULL;
  void *data = NULL;
  size_t length = 0;
  if (napi_get_arraybuffer_info(env, args[1], &data, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "finishProbeImage reads an ArrayBuffer");
    return NULL;
  }
  uint32_t v[15];
  for (int k = 0; k < 15; k++) {
    if (k == 1) continue;
    if (napi_get_value_uint32(env, args[k], &v[k]) != napi_ok) {
      napi_throw_type_error(env, NULL, "finishProbeImage takes integers");
      return NULL;
    }
  }
  const uint32_t *u = v + 1;
  if (v[0] >= (uint32_t)kernel_variant_count || u[6] > 16 || u[10] > 8) {
    napi_throw_range_error(env, NULL, "finishProbeImage: bad variant, window or bin count");
    return NULL;
  }
  const finish_input in = {.memory = (uint8_t *)data, .length = length, .log = u[1], .count = u[2], .sorted = u[3],
                           .cursors = u[4], .windows = u[5], .windowShift = u[6], .histograms = u[7], .flags = u[8],
                           .windowRows = u[9], .binsLog2 = u[10], .rowPet = u[11], .petBest = u[12], .petTouched = u[13]};
  // The AVX-512 variant takes each row's best pair of bins in vectors (its CPU has AVX-512F), the other one by scalars.
  const int64_t touched = finish_probe_image(&in, v[0] == 0);
  if (touched < 0) {
    napi_throw_range_error(env, NULL, "finishProbeImage: a region, row or pet outside the buffer");
    return NULL;
  }
  napi_value result;
  napi_create_int64(env, touched, &result);
  return result;
}

NAPI_MODULE_INIT() {
  // The variants this CPU runs, fastest first: their names in `variants`, passed back to `nearest` by position.
  napi_value names;
  napi_create_array(env, &names);
  uint32_t count = 0;
  __builtin_cpu_init();
  for (int k = 0; k < kernel_variant_count; k++) {
    const int supported = k == 0 ? __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni")
                                 : __builtin_cpu_supports("avx2");
    napi_value entry, name, index, layout;
    if (!supported) continue;
    napi_create_object(env, &entry);
    napi_create_string_utf8(env, kernel_variants[k].name, NAPI_AUTO_LENGTH, &name);
    napi_create_int32(env, k, &index);
    napi_create_string_utf8(env, kernel_variants[k].layout, NAPI_AUTO_LENGTH, &layout);
    napi_set_named_property(env, entry, "name", name);
    napi_set_named_property(env, entry, "id", index);
    napi_set_named_property(env, entry, "layout", layout);
    napi_set_element(env, names, count++, entry);
  }
  napi_set_named_property(env, exports, "variants", names);
  export_function(env, exports, "nearest", nearest);
  export_function(env, exports, "bestAnchor", best_anchor);
  export_function(env, exports, "layQuads", lay_quads);
  export_function(env, exports, "lookupWords", lookup_words);
  export_function(env, exports, "scanLookups", scan_lookups);
  export_function(env, exports, "finishProbeImage", finish_probe);
  export_function(env, exports, "adviseHugePages", advise_huge_pages);
  return exports;
}

#else
// Other processors: no variants, and the engine keeps its WebAssembly kernel.
NAPI_MODULE_INIT() {
  napi_value names;
  napi_create_array(env, &names);
  napi_set_named_property(env, exports, "variants", names);
  export_function(env, exports, "adviseHugePages", advise_huge_pages);
  return exports;
}
#endif
