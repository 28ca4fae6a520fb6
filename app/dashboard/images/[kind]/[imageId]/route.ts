import { getSessionUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { readImageForUser } from "@/lib/dashboard/images";

export async function GET(_req: Request, context: { params: Promise<{ kind: string; imageId: string }> }) {
  const { kind, imageId } = await context.params;
  const db = await getDb();
  const bytes = await readImageForUser(db, await getSessionUser(db), kind, imageId);
  if (!bytes) return new Response("Not found", { status: 404, headers: { "content-type": "text/plain" } });
  return new Response(bytes as BodyInit, {
    headers: { "content-type": "image/jpeg", "cache-control": "private, max-age=3600", "x-content-type-options": "nosniff" },
  });
}
