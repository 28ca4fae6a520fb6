/**
 * Data already serialised: an endpoint may answer this instead of a value (e.g. a cached view that
 * is serialised once, not on every read). The API's envelope around it is the same bytes as
 * `JSON.stringify({ success: true, data: value })` (lib/api/exchange.ts, successAnswer).
 */
export class JsonText {
  constructor(readonly text: string) {}
}
