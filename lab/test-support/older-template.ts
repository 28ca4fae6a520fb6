import { FEATURES_VERSION } from "@/lib/biometrics/parameters";
import { searchKeyByteLength } from "@/lib/biometrics/search-key";
import { deserializeTemplate, serializeTemplate } from "@/lib/biometrics/template";
import { VOCABULARY_FORMAT } from "@/lib/biometrics/visual-words";

/**
 * A template as format FEATURES_VERSION stored it under an older vocabulary: the same features, the older version, and
 * another search key (`keySource`'s words and signatures) marked with the previous vocabulary format, which today's
 * search-key reader refuses. What a database holds from before the vocabulary changed.
 */
export function storedUnderOlderVocabulary(template: Uint8Array, keySource: Uint8Array): Uint8Array {
  const searchKey = deserializeTemplate(keySource).searchKey;
  const older = serializeTemplate({ ...deserializeTemplate(template), version: FEATURES_VERSION, searchKey });
  const keyStart = older.length - searchKeyByteLength(searchKey.words.length);
  new DataView(older.buffer, older.byteOffset, older.byteLength).setUint16(keyStart + 4, VOCABULARY_FORMAT - 1, true);
  return older;
}
