/** Why an upload cannot be used at all: a typed, expected failure (not a bug). */
export type ImageRejectionCode = "NOT_JPEG" | "CORRUPT" | "TOO_SMALL" | "TOO_LARGE" | "BLANK";

export class ImageRejection extends Error {
  constructor(
    readonly code: ImageRejectionCode,
    message: string,
  ) {
    super(message);
    this.name = "ImageRejection";
  }
}
