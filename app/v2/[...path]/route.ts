// Every method goes through the one wrapper, so that HEAD and OPTIONS too get the API's answers
// (401 without a key, 404 10404 with one) rather than Next's automatic ones.
export {
  handleV2Request as GET,
  handleV2Request as POST,
  handleV2Request as PATCH,
  handleV2Request as DELETE,
  handleV2Request as PUT,
  handleV2Request as HEAD,
  handleV2Request as OPTIONS,
} from "@/lib/api/v2";
