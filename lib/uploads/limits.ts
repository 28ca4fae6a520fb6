/** The largest image an upload accepts, in bytes (the API's multipart cap and the dashboard's are derived from it). */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
