export { handleV2Request as GET, handleV2Request as POST, handleV2Request as PATCH, handleV2Request as DELETE, handleV2Request as PUT } from "@/lib/api/v2";
