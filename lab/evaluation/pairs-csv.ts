/**
 * CSV for comparison pairs: the pairs file read by the SIFT peer (header row with
 * columns `a` and `b` anywhere among others) and the headerless `a,b,score` lines
 * it prints. Quoting follows RFC 4180, matching Python's csv module on the other side.
 */

export interface ImagePair {
  a: string;
  b: string;
}

export interface PairScore extends ImagePair {
  score: number;
}

/** Rows of fields. Handles quoted fields (with "" escapes, commas, newlines), CRLF, a BOM; skips rows whose fields are all blank. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  // Set once a field has any content, including an empty quoted string, so that a
  // quote only opens a quoted field at the very start of a field.
  let fieldStarted = false;
  let line = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;

  const endField = () => {
    row.push(field);
    field = "";
    fieldStarted = false;
  };
  const endRow = () => {
    endField();
    // Same rule as the Python peer: a row of only blank fields is not a pair.
    if (row.some((f) => f.trim() !== "")) rows.push(row);
    row = [];
  };

  while (i < text.length) {
    const c = text[i];
    if (c === '"' && !fieldStarted) {
      const quoteLine = line;
      fieldStarted = true;
      i++;
      for (;;) {
        if (i >= text.length) throw new SyntaxError(`CSV line ${quoteLine}: unterminated quoted field`);
        if (text[i] === '"') {
          if (text[i + 1] !== '"') break;
          field += '"';
          i += 2;
        } else {
          if (text[i] === "\n") line++;
          field += text[i++];
        }
      }
      i++;
      const next = text[i];
      if (next !== undefined && next !== "," && next !== "\n" && next !== "\r") {
        throw new SyntaxError(`CSV line ${line}: unexpected character after closing quote`);
      }
      continue;
    }
    if (c === ",") {
      endField();
    } else if (c === "\n" || c === "\r") {
      endRow();
      if (c === "\r" && text[i + 1] === "\n") i++;
      line++;
    } else {
      field += c;
      fieldStarted = true;
    }
    i++;
  }
  if (fieldStarted || row.length > 0) endRow();
  return rows;
}

/** Pairs from a CSV whose header names columns `a` and `b`; other columns are ignored. */
export function parsePairsCsv(text: string): ImagePair[] {
  const [header, ...rows] = parseCsv(text);
  if (!header) throw new SyntaxError("pairs CSV is empty");
  const names = header.map((name) => name.trim());
  const ia = names.indexOf("a");
  const ib = names.indexOf("b");
  if (ia < 0 || ib < 0) throw new SyntaxError(`pairs CSV header must contain columns a and b, got: ${names.join(",")}`);
  return rows.map((row, k) => {
    if (row.length <= Math.max(ia, ib)) {
      throw new SyntaxError(`pairs CSV data row ${k + 1}: ${row.length} fields, missing column a or b`);
    }
    return { a: row[ia], b: row[ib] };
  });
}

/** Headerless `a,b,score` lines, as printed by scripts/peer/sift_ransac_pairs.py. */
export function parseScoreLines(text: string): PairScore[] {
  return parseCsv(text).map((row, k) => {
    const score = Number(row[2]);
    if (row.length !== 3 || row[2].trim() === "" || !Number.isFinite(score)) {
      throw new SyntaxError(`score line ${k + 1}: expected a,b,score, got ${JSON.stringify(row)}`);
    }
    return { a: row[0], b: row[1], score };
  });
}

export function formatScoreLines(scores: readonly PairScore[]): string {
  return scores.map(({ a, b, score }) => `${quoteField(a)},${quoteField(b)},${score}\n`).join("");
}

function quoteField(field: string): string {
  return /[",\r\n]/.test(field) ? `"${field.replace(/"/g, '""')}"` : field;
}
