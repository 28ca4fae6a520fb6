import { describe, expect, it } from "vitest";
import { formatScoreLines, parseCsv, parsePairsCsv, parseScoreLines } from "./pairs-csv";

describe("parseCsv", () => {
  it("splits plain rows", () => {
    expect(parseCsv("a,b\n1,2\n")).toEqual([
      ["a", "b"],
      ["1", "2"],
    ]);
  });

  it("handles quotes, escaped quotes, embedded commas and newlines", () => {
    expect(parseCsv('"x, y","say ""hi""","two\nlines",""\n')).toEqual([["x, y", 'say "hi"', "two\nlines", ""]]);
  });

  it("tolerates CRLF, a lone CR, a BOM, a missing final newline and blank lines", () => {
    expect(parseCsv("\uFEFFa,b\r\n\r\n1,2\r3,4\n , \n5,6")).toEqual([
      ["a", "b"],
      ["1", "2"],
      ["3", "4"],
      ["5", "6"],
    ]);
  });

  it("keeps empty fields", () => {
    expect(parseCsv("1,,3\n,x,\n")).toEqual([
      ["1", "", "3"],
      ["", "x", ""],
    ]);
  });

  it("treats a quote inside an unquoted field literally", () => {
    expect(parseCsv('ab"c,d\n')).toEqual([['ab"c', "d"]]);
  });

  it("reports malformed quoting with a line number", () => {
    expect(() => parseCsv('a\n"open,b\n')).toThrow(/line 2: unterminated/);
    expect(() => parseCsv('"a"x,b\n')).toThrow(/line 1: unexpected character/);
  });
});

describe("parsePairsCsv", () => {
  it("locates columns a and b by name and ignores the rest", () => {
    const text = 'label, b ,id,a\r\ngenuine,dog1/2.jpg,7,dog1/1.jpg\r\nimpostor,"cat 3/1,x.jpg",8,dog1/1.jpg\r\n';
    expect(parsePairsCsv(text)).toEqual([
      { a: "dog1/1.jpg", b: "dog1/2.jpg" },
      { a: "dog1/1.jpg", b: "cat 3/1,x.jpg" },
    ]);
  });

  it("returns no pairs for a header-only file", () => {
    expect(parsePairsCsv("a,b\n")).toEqual([]);
  });

  it("rejects a missing column, an empty file and short rows", () => {
    expect(() => parsePairsCsv("x,b\n1,2\n")).toThrow(/columns a and b/);
    expect(() => parsePairsCsv("")).toThrow(/empty/);
    expect(() => parsePairsCsv("id,a,b\n1,x.jpg\n")).toThrow(/row 1/);
  });
});

describe("score lines", () => {
  it("round-trips through the writer and reader, quoting where needed", () => {
    const scores = [
      { a: "dog1/1.jpg", b: "dog1/2.jpg", score: 134 },
      { a: 'odd "name".jpg', b: "comma,name.jpg", score: 0 },
    ];
    const text = formatScoreLines(scores);
    expect(text).toBe('dog1/1.jpg,dog1/2.jpg,134\n"odd ""name"".jpg","comma,name.jpg",0\n');
    expect(parseScoreLines(text)).toEqual(scores);
  });

  it("rejects lines without a numeric third field", () => {
    expect(() => parseScoreLines("a.jpg,b.jpg\n")).toThrow(/line 1/);
    expect(() => parseScoreLines("a.jpg,b.jpg,x\n")).toThrow(/line 1/);
    expect(() => parseScoreLines("a.jpg,b.jpg,\n")).toThrow(/line 1/);
  });
});
