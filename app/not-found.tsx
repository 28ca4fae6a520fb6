import Link from "next/link";
import { connection } from "next/server";

// The 404 outside the dashboard, in the site's own style. Rendered per request (connection()), like
// every page, so its scripts carry the request's CSP nonce (proxy.ts) instead of being refused.
export default async function NotFound() {
  await connection();
  return (
    <main className="mx-auto max-w-2xl p-8" data-testid="site-not-found">
      <h1 className="text-2xl font-semibold">Page not found</h1>
      <p className="mt-2 text-slate-600">There is nothing at this address.</p>
      <p className="mt-6 flex gap-4">
        <Link href="/" className="font-medium text-teal-800 underline">
          Home
        </Link>
        <Link href="/dashboard" className="font-medium text-teal-800 underline">
          Staff dashboard
        </Link>
      </p>
    </main>
  );
}
