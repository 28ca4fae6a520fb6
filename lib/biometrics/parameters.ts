/**
 * Every tuned constant of the nose-print engine, each with the reason for its value.
 * Changing anything that alters templates requires bumping TEMPLATE_VERSION.
 */

/** Bumped whenever extraction output changes; stored templates of another version are re-extracted. */
export const TEMPLATE_VERSION = 12;
/**
 * Bumped whenever the matcher gives another raw similarity for the same templates (templates need not change: the
 * half-step hypotheses of decision 0022 did not), so that the calibration, measured on raw similarities, must be
 * measured again. 1: nine rotation hypotheses, half steps included. 2: a session the upright comparison does not accept
 * also tries each probe image at its most promising quarter turn (decision 0029).
 */
export const MATCHER_REVISION = 2;
/**
 * Bumped whenever a single image pair (`scoreImagePair`) is scored another way from the same comparisons, so that the
 * pair calibration table alone must be measured again. 1: a pair the upright comparison does not accept also tries its
 * first image's four quarter turns (decision 0032).
 */
export const PAIR_SCORING_REVISION = 1;

// --- Decoding and input limits -------------------------------------------------------------

/** Decompression-bomb guard: 40 MP is above any phone camera, far below what would exhaust memory. */
export const MAX_INPUT_PIXELS = 40_000_000;
/**
 * Smallest accepted side. Real detector crops go down to ~70 px (a few in a thousand are under 96 px, REAL-DATA.md);
 * whether such a crop carries identity is decided by its measured quality (sharpness, keypoints), not by its size.
 */
export const MIN_INPUT_SIDE = 64;
/**
 * Every image is resampled so its longer side is this many pixels. Crops are nose-centred, so this
 * also normalises nose scale; 320 px keeps the smallest beads (~5 px) while bounding the cost.
 */
export const WORK_SIZE = 320;
/** Standard deviation (grey levels) below which an image is blank: a lens cap or a wall. */
export const BLANK_STDDEV = 3;

// --- Enhancement ---------------------------------------------------------------------------

/** Gaussian sigma (px) of the local mean/contrast window: a few beads wide, so lighting gradients vanish. */
export const NORMALISE_SIGMA = 10;
/** Soft floor (grey levels) of the local contrast: camera noise on flat background is ~3–8, bead relief 15–40. */
export const NORMALISE_MIN_STD = 12;
/**
 * Dark-only tone curve before the normalisation: below DARK_LIFT_KNEE grey levels g becomes
 * (DARK_LIFT_KNEE + DARK_LIFT_K) · ln(1 + g / DARK_LIFT_K), slope 1 at the knee and the identity slope above it. The fixed
 * floor then acts like a floor proportional to the brightness on dark regions only: real pads are dark (median grey 47,
 * REAL-DATA.md), and on a dark soft pad the beads' relief spans a few grey levels that the floor of 12 flattened. Bright
 * regions keep today's floor, so a bright patterned backdrop is not lifted (decision 0013: real-setting pair AUC 0.972 →
 * 0.982, genuine pairs at 0 1.9 → 0.8 %; a whole-range curve lifted a shared backdrop's impostor to 55.8).
 */
export const DARK_LIFT_KNEE = 100;
export const DARK_LIFT_K = 40;

// --- Keypoints -------------------------------------------------------------------------------

/**
 * Blob scales (sigma, px at WORK_SIZE). Single beads (sigma ≈ 2) do not survive the motion blur and defocus
 * of real crops; groups of beads at these coarser scales do (hard-set pair AUC 0.75 → 0.80).
 */
export const DETECTION_SIGMAS = [2.5, 3.5, 4.9, 6.9] as const;
/** Minimum scale-normalised Hessian determinant on the contrast-normalised image. */
export const DETECTION_MIN_RESPONSE = 0.02;
/** At most this many keypoints per image: matching cost grows with its square; 300 beat 220 on the hard set. */
export const MAX_KEYPOINTS = 300;
/**
 * No scale level takes more than this share of MAX_KEYPOINTS (format 11). Uncapped, a sharp crop spent two thirds of
 * its keypoints on the finest level (σ 2.5: 199 of 298 on the reality-matched setting), blobs that defocus or motion
 * blur moves to coarser levels or wipes out, while a soft capture of the same nose finds most of its keypoints at
 * σ 3.5–6.9. Capped at 40 %, the sharp crop describes the coarser blobs the soft one also shows: pairs of one sharp
 * and one soft capture, FNMR at FMR 0.1 % 15.1 → 10.8 %, with gains on sharp reality-matched and hard pairs too
 * (docs/engine.md, "Keypoints that survive blur").
 */
export const MAX_LEVEL_SHARE = 0.4;
/** Keypoints are spread over a GRID x GRID layout, each cell capped, so one textured corner cannot take all. */
export const SPREAD_GRID = 6;
/** Keypoints whose descriptor window would leave the image by more than this fraction are dropped. */
export const BORDER_SIGMAS = 3;
/** Pixels brighter than this (0–255, smoothed) are glare: keypoints there describe the highlight, not the nose. */
export const GLARE_LEVEL = 245;

// --- Descriptors ---------------------------------------------------------------------------

/**
 * Descriptors are measured in frames fixed to the image, turned by these angles (degrees), not in each
 * keypoint's dominant gradient direction. On a lit relief of domed beads the dominant gradient follows
 * the light, not the nose: across captures under another light only 28 % of true keypoint partners got
 * orientations within 15 ° of the true turn, and the true partner was the nearest descriptor for 16 % of
 * them; with frames at the true turn it was 47 % (`npm run eval:correspondence`, docs/engine.md). Phones
 * are held roughly upright, so the turn between two captures is small (± 30 ° each here): every image is
 * described in a few fixed frames and the matcher tries each frame of one image against the upright
 * frame of the other (`pair-matcher.ts`). The upright frame comes first: it is what galleries index.
 */
export const DESCRIPTOR_ANGLES_DEG: readonly number[] = [0, -20, 20, -40, 40];
export const DESCRIPTOR_SETS = DESCRIPTOR_ANGLES_DEG.length;
/**
 * The frames the pair matcher and the gallery's search keys use: the first MATCHED_SETS of DESCRIPTOR_ANGLES_DEG
 * (0, ± 20°; the matcher reaches ± 40° by pairing opposite ± 20° frames). The outer frames (± 40°, format 8) serve
 * only as a 1:N probe's lookups: at a turn of about 40° between probe and enrolled image, the probe's outer frame
 * meets the enrolled images' upright postings, all INDEXED_KEYPOINTS of them, where the paired ± 20° frames meet
 * only INDEXED_TURNED_KEYPOINTS (the true pet in the first stage's 16 among 1,000 real pets: 97.4 → 98.0 %,
 * docs/engine.md, "Outer probe frames and a light re-rank"). So only a 1:N probe's images are described in them
 * (extract.ts `outerFrames`); every other image's template holds the MATCHED_SETS frames alone, which saves two of
 * five network evaluations per keypoint, the bulk of an extraction (docs/engine.md, "Outer frames for 1:N probes only").
 */
export const MATCHED_SETS = 3;
/**
 * How many (quarter turn, enrolled image) pairs of one probe image a session the upright comparison does not accept
 * matches in full, chosen by their light comparison (session-matcher.ts `turnedRow`, decision 0029). On the any-roll
 * twin of real-s600 one reads as two do (sessions: EER 0.06 %, FNMR 0 % at FMR 0.1 %), for one full description of the
 * probe image (~35 ms) and one comparison instead of up to two of each.
 */
export const TURNED_PAIRS_MATCHED = 1;
/**
 * The light similarity a (quarter turn, enrolled image) pair must reach to be matched in full (`turnedRow`). On the
 * any-roll twin of real-s600 (40 subjects, 120 probe images each way), the best of a probe image's fifteen light
 * comparisons read 0.6 at the median against another nose (0.9 at the 90th percentile) and 0.8 at the least for the 60
 * genuine images whose turned comparison beat their upright one past a similarity of 6: at 0.8, 80 % of impostor probe
 * images skip the full description and comparison (~38 ms of CPU each) and no such genuine image is lost (at 1.0, 95 %
 * and one).
 */
export const TURN_LIGHT_FLOOR = 0.8;
/**
 * Dimensions of a descriptor: the learned network's output (descriptor-net.ts). The network is trained with 128
 * outputs and folded to their 64 principal directions (`npm run fold:descriptor`, 90 % of the descriptors' second
 * moment): every dot product of a comparison costs half, and the true partner is the nearest descriptor for
 * 63.8 % of held-out keypoints across bursts against 64.8 % with all 128 (docs/engine.md, format 7).
 */
export const DESCRIPTOR_DIMS = 64;
/**
 * Width of a keypoint's patch (patches.ts) in keypoint sigmas: ~2–3 beads each way. The hand-made gradient
 * histogram before format 4 had its optimum here too (4 cells of 2.5 sigma; 2.0 and 3.5 sigma cells lost).
 */
export const DESCRIPTOR_WINDOW_SIGMAS = 10;
/** Quantisation scale: descriptors are stored as int8 = round(value * 127). */
export const DESCRIPTOR_QUANT = 127;

// --- Matching --------------------------------------------------------------------------------

/**
 * Lowe's ratio on descriptor distance. Bead texture repeats, so true matches often have a close
 * runner-up; a loose ratio keeps them and geometric verification removes the rest.
 */
export const MATCH_RATIO = 0.92;
/**
 * Minimum cosine similarity of a tentative match. Learned descriptors of unrelated keypoints are nearly
 * orthogonal (cosine p50 0.07, p90 0.27, p99 0.43; true partners across bursts p10 0.30, p50 0.58), so the
 * floor sits near the unrelated pairs' 90th percentile; mutual nearest neighbours and the ratio test do the
 * rest. On the development set (seed 55, 3 vs 5) floors of 0.1 / 0.2 / 0.3 gave session EER 0.06 / 0.07 /
 * 0.12 % and FNMR at FMR 0.1 % 0 / 0 / 1.1 % (docs/engine.md, format 4).
 */
export const MATCH_MIN_COSINE = 0.2;
/**
 * How hard an inlier's genericness g (distinctiveness.ts) discounts it: weight × ((1 − g) / (1 −
 * GENERICNESS_REFERENCE))^GENERICNESS_EXPONENT. Inliers on what every nose shares (pad outline, nostrils,
 * philtrum) carried clean photos' impostors past the threshold; of exponents 1, 2, 4 and 6, 4 and 6 separated
 * best on both settings and 4 is the milder (docs/engine.md, format 9, `npm run eval:distinctiveness`).
 */
export const GENERICNESS_EXPONENT = 4;
/**
 * A typical keypoint's genericness (the median is 0.58–0.59 on both settings, 10th–90th percentile 0.53–0.68),
 * where the discount is 1: similarities stay in "weighted inliers" of a typical keypoint.
 */
export const GENERICNESS_REFERENCE = 0.6;
/**
 * The 1:N first stage weighs each probe keypoint's votes by ((1 − g) / (1 − GENERICNESS_REFERENCE)) to this power
 * (`probeVoteWeight`). Among the 1,000 real pets of eval-s1-1100 the true pet reached the 64 for 98.9 / 99.1 / 98.7 %
 * of probes with 0 / 2 / 4 (docs/engine.md, format 9).
 */
export const PROBE_VOTE_EXPONENT = 2;
/**
 * Burstiness (burstiness.ts): a keypoint whose upright descriptor has a near-duplicate elsewhere in its own image,
 * at least BURSTINESS_EXCLUSION_SIGMAS × σ away, is a repeated pattern of the scene; its inliers count
 * burstinessFactor(s) of their weight (the smaller of the two keypoints'), 1 up to BURSTINESS_FULL and 0 from
 * BURSTINESS_NONE. On a nose, 95 % of genuine inliers' keypoints have s ≤ 0.74; on a shared periodic backdrop, half of
 * the inliers of impostor pairs scoring ≥ 40 have s ≥ 0.86 (docs/decisions/0015-burstiness-weighted-inliers.md).
 */
export const BURSTINESS_EXCLUSION_SIGMAS = 3;
export const BURSTINESS_FULL = 0.75;
export const BURSTINESS_NONE = 0.9;
/**
 * Extraction (features.ts `extractLocalFeatures`): rounds in which keypoints whose self-similarity exceeds
 * BURST_REFILL_DROP are dropped and their places given to the next candidates, so a periodic backdrop does not take
 * the keypoint budget from the nose (on since format 11; a change of value changes templates: bump TEMPLATE_VERSION
 * and recalibrate). Only the dropped keypoints' upright descriptors are extra work: on a
 * nose without a patterned scene nearly none are dropped. BURST_REFILL_DROP must not exceed BURSTINESS_FULL: the
 * matcher then takes every kept keypoint's factor as 1 (a kept keypoint whose repeats were dropped would look unique
 * to it). With 2 rounds and the drop at 0.75, a loose shared periodic backdrop set came close to its plain twin's
 * figures with no loss on plain real and hard sets; at 0.7 it came closer still, but two soft crops of a plain real
 * set fell under the quality gate (decision 0015).
 */
export const BURST_REFILL_ROUNDS = 2;
export const BURST_REFILL_DROP = 0.75;
/** Largest ratio between matched keypoint scales and the anchor's (captures differ by ≤ 1.6x). */
export const GEOMETRY_SCALE_TOLERANCE = 1.5;
/** Position tolerance of the anchor hypothesis: fixed part (px) and part proportional to distance. */
export const GEOMETRY_POSITION_TOLERANCE_PX = 6;
export const GEOMETRY_POSITION_TOLERANCE_RELATIVE = 0.12;
/** Position tolerance after the least-squares affine refit (elastic skin warp remains). */
export const GEOMETRY_REFIT_TOLERANCE_PX = 10;
/** The affine refit (tilt, foreshortening) needs this many similarity inliers, so it cannot bend onto chance matches. */
export const AFFINE_MIN_INLIERS = 6;
/** A fitted transform outside this scale range is implausible for two crops of the same nose. */
export const GEOMETRY_MIN_SCALE = 0.5;
export const GEOMETRY_MAX_SCALE = 2;

// --- Quality ---------------------------------------------------------------------------------

/**
 * An image scoring below this is unusable (not enrolled, not used as a probe). Soft crops of quality 40–49 still match
 * their own nose far above impostors (decision 0014: real-setting genuine pairs at 0 1.9 → 0.6 %, no impostor higher).
 */
export const QUALITY_USABLE_THRESHOLD = 40;
/** An image with fewer keypoints than this cannot be matched reliably whatever its other figures. */
export const QUALITY_MIN_KEYPOINTS = 40;

// --- Sessions --------------------------------------------------------------------------------

/** Usable nose images needed to enrol a pet, and to probe one (the API's minimum counts). */
export const MIN_ENROL_IMAGES = 5;
export const MIN_PROBE_IMAGES = 3;
/**
 * Of the images uploaded, this many must be usable for the job to succeed: below it, the enrolment or
 * probe has too little evidence and the job ends FAILED with the per-image quality as its reason.
 */
export const MIN_USABLE_ENROL_IMAGES = 3;
export const MIN_USABLE_PROBE_IMAGES = 2;

// --- 1:N search ------------------------------------------------------------------------------

/**
 * 1:N is a cascade (cascade.ts, `runCascade`): the inverted index below ranks a gallery's pets by weighted,
 * orientation-consistent word votes (true pet first 83 %, in the top 10 91 %, top 40 96 % of hard probes among 180
 * pets); the fast pass compares the best SHORTLIST_SIZE lightly (the matcher on each image's RERANK_KEYPOINTS
 * strongest keypoints, about 1 ms a pet) and the RERANK_PROMOTED best of those in full (45 ms a pet on one core with
 * the half-step hypotheses: 15 image pairs). Matching all 16 in full made an enrolled animal's search cost 2.8 times
 * the CPU (715 against 255 ms at 1,000 pets) and found no pet more (`npm run bench -- --only identification`).
 */
export const SHORTLIST_SIZE = 16;
/**
 * The cascade's deep pass, run only when the fast pass's full matching accepted nobody (`rerankNeeded`): the first
 * stage by all frames ranks RERANK_CANDIDATES pets; each one not compared yet is compared lightly and the
 * RERANK_PROMOTED best of all lightly compared pets not matched yet are compared in full (`promoteByLightScore`).
 * Deep and light rather than shallow and thorough: among 1,000 real hard pets the first stage ranked the true pet
 * of 9 probes beyond 64 (69–349) while the matcher accepts it, and the light comparison on 60 keypoints ranked
 * the true pet first among all 384 candidates for every probe whose session the matcher accepts, at 1.0–1.2 ms a
 * pet against 3.1–3.8 ms on 120 keypoints (on 45 keypoints 3 of them fell to 3rd, 5th and 11th; `npm run eval:rerank`):
 * 384 × 60 costs about 2.5 times the CPU of 64 × 120 and reaches 6 times as deep (docs/engine.md, "A deeper, lighter
 * re-rank").
 */
export const RERANK_CANDIDATES = 384;
export const RERANK_KEYPOINTS = 60;
export const RERANK_PROMOTED = 4;
/**
 * The deep pass in steps (cascade.ts `deepPass`): it compares its first DEEP_LIGHT_FIRST candidates lightly first, and
 * matches in full straight away the pets whose light similarity reaches DEEP_EARLY_LIGHT (the fast pass's leftovers
 * before its first stage, the first candidates after their light comparison); an accepted pet ends the search there.
 * The highest light similarity a probe met among 450 other pets was at most 1.40 (hard) and 1.65 (real), where 95 %
 * of the genuine pairs read 1.5–1.7 or more and half of them 8.8–10.7 (`npm run eval:light-floor`): at 2.0 an unknown
 * animal's search rarely matches a pet early, and a true pet the first stage ranks high skips most of the deep pass.
 */
export const DEEP_LIGHT_FIRST = 64;
export const DEEP_EARLY_LIGHT = 2.0;
/**
 * The fast pass also matches in full the first stage's FIRST_STAGE_PROMOTED best pets, whatever their light similarity:
 * the two rankings fail on different probes. In the hard protocol (eval-s1-1100) one true pet the first stage ranked
 * first had a light similarity of 0.85, ninth of the 16 (65th of the deep pass's 384), and a full score of 68.
 */
export const FIRST_STAGE_PROMOTED = 1;
/**
 * The turned pass (cascade.ts) shortlists and compares lightly the quarter-turned views of the probe's
 * TURNED_PASS_IMAGES best images by quality (`turnedPassImages`), not of all: every search for an unknown animal runs
 * it, and its first stage scans a list for each of a view's lookups (a view in three frames: the fast pass's lookups
 * again for each image). Its full matching still turns every probe image. With the best image alone rather than the two
 * best, among 100,000 pets an unknown animal's median CPU went from 929 / 988 / 888 to 750 / 686 / 729 ms and its p95
 * from 664 / 608 / 673 to 488 / 492 / 479 ms (hard / real / soft, `npm run bench -- --only identification`, in turn);
 * noses at any roll, every capture turned anew (`--settings real-any`), lost one of 70 at 1,000 and at 100,000 pets
 * (decision 0056, after 0053's three images to two).
 */
export const TURNED_PASS_IMAGES = 1;
/**
 * Searches whose fast-pass votes a gallery shard keeps for their deep pass at once (inverted-index.ts `VoteKeeping`):
 * two identifications in flight reuse theirs; each costs 68 B a row for each probe image (~1 KB a pet for three).
 */
export const KEPT_SEARCHES = 2;

// --- 1:N inverted index (visual words with Hamming embedding) --------------------------------

/**
 * The gallery's first stage is an inverted file: each indexed keypoint is filed under its visual word
 * (a two-level vocabulary, VOCABULARY_COARSE x VOCABULARY_FINE words trained by `npm run train:vocabulary`)
 * with a SIGNATURE_BITS Hamming signature of where it lies inside the word's cell. A probe keypoint votes
 * for the enrolled images that hold a keypoint in the same word within HAMMING_THRESHOLD bits, weighted
 * by the word's rarity, and the votes of one enrolled image count only where their orientation changes
 * agree (ANGLE_BINS), as a true match's do.
 *
 * Per probe image a pet scores the mean of its two best enrolled images, not its best one: a pet's
 * captures of one nose agree, while in a large gallery some single image of another nose matches any
 * one probe image as well by chance. Among 100,000 pets one lookalike image (shared by ~80 distractor
 * pets of `npm run bench`) had put a true pet at rank 211; with two images it is at 10, and the true pet
 * is in the shortlist of 90.6 % of 180 hard probes among 10,000 pets, 88.9 % before (docs/engine.md).
 */
export const VOCABULARY_COARSE = 64;
export const VOCABULARY_FINE = 128;
export const VOCABULARY_WORDS = VOCABULARY_COARSE * VOCABULARY_FINE;
export const SIGNATURE_BITS = 64;
/**
 * The strongest keypoints of each image that the index holds in its upright frame (templates keep keypoints
 * strongest first), and in each turned frame (DESCRIPTOR_ANGLES_DEG). A probe looks its three frames up
 * against the upright postings, which reaches a turn of about ± 30°; its ± 20° frames against an image's
 * ∓ 20° postings reach ± 40°, as the matcher does. Among 1,000 real hard pets (`npm run bench:search`,
 * docs/engine.md) the true pet was in the shortlist for 95.8 % of probes with 300 upright postings an
 * image, 97.1 % with 240 upright and 80 in each turned frame (400 postings, a third more), and 97.2 % with
 * 300 and 100 (500 postings).
 */
export const INDEXED_KEYPOINTS = 240;
export const INDEXED_TURNED_KEYPOINTS = 80;
/** Postings an image adds to the index: its upright keypoints and each turned frame's. */
export const INDEXED_POSTINGS = INDEXED_KEYPOINTS + (MATCHED_SETS - 1) * INDEXED_TURNED_KEYPOINTS;
/** The strongest keypoints of each probe image looked up in the index. */
export const PROBE_KEYPOINTS = 300;
/**
 * A probe keypoint's descriptor (in each frame) is looked up under its QUERY_WORDS nearest words: quantisation misses
 * true matches. One word for the turned frames scanned a third less but cost 4 points of the true pet in the shortlist
 * among 1,000 and 10,000 pets (`npm run bench:search`, docs/engine.md), so every frame takes 2.
 */
export const QUERY_WORDS = 2;
/**
 * A soft probe image (quality below SOFT_IMAGE_QUALITY: blurred, dark, few keypoints) is looked up under each
 * descriptor's nearest word and its next nearest, up to SOFT_QUERY_WORDS, whose squared distance is at most
 * SOFT_QUERY_WORD_RATIO times the nearest's (multiple assignment by distance ratio). Blur moves a descriptor towards the
 * boundaries of the vocabulary's cells, where its sharp twin's word is often the third or fourth nearest: among 100,000
 * pets the first stage ranked the true pet of three of 48 soft probes 849th, 1,977th and 11,260th with two words, and
 * 51st at worst with these (the true pet in the deep pass's 384 for 45 → 48), and rank-1 at 100,000 pets went from
 * 92 to 96 %, as among 1,000. Sharp images keep two words: looked up this way they cost 1.8 times the lookups for no pet
 * found more (hard setting). A soft probe's lookups (about 9,300 for three images in five frames) stay near a sharp
 * one's (8,100): its images hold fewer keypoints (decision 0054).
 */
export const SOFT_IMAGE_QUALITY = 70;
export const SOFT_QUERY_WORDS = 4;
export const SOFT_QUERY_WORD_RATIO = 1.3;
/**
 * Stop words: a lookup skips a word whose posting list is longer than STOP_WORD_FACTOR times the mean
 * list (and than STOP_WORD_MIN_POSTINGS). Visual words are far from equally frequent; the most frequent
 * hold most of the postings a probe scans yet weigh least (idf²), so skipping them cuts the first
 * stage's scan at 100,000 pets (CPU 1,546 → 1,173 ms a probe, the true pet in the shortlist 87.8 → 86.7 %
 * of 180 hard probes; with the threshold below 804 ms and 87.2 %, docs/engine.md). The floor keeps
 * small galleries, whose list lengths are mostly chance, from losing words.
 */
export const STOP_WORD_FACTOR = 2;
export const STOP_WORD_MIN_POSTINGS = 1000;
/**
 * Signature bits a posting may differ by and still vote. 20 rather than 22: a vote costs random reads
 * of the image's scratch, and the farther postings are mostly chance; at 100,000 pets (stop words on)
 * the first stage took 31 % less CPU (1,173 → 804 ms a probe) and kept the true pet in the shortlist
 * as often (86.7 → 87.2 % of 180 hard probes; `npm run bench:search`, docs/engine.md).
 */
export const HAMMING_THRESHOLD = 20;
export const HAMMING_SIGMA = 14;
export const ANGLE_BINS = 16;
