export { serveOpenApiDocument as GET } from "@/lib/api/openapi-route";
