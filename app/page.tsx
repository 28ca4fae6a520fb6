import Link from "next/link";

// Rendered per request, like every page: its scripts carry the request's CSP nonce (proxy.ts).
export const dynamic = "force-dynamic";

export default function HomePage() {
  return (
    <main className="mx-auto max-w-2xl p-8">
      <h1 className="text-2xl font-semibold">Rhinarium</h1>
      <p className="mt-2 text-slate-600">
        Pet nose-print registry: register a pet once from a few photos of its nose, then verify or identify it.
      </p>
      <p className="mt-6">
        <Link href="/dashboard" className="font-medium text-teal-800 underline">
          Staff dashboard
        </Link>
      </p>
    </main>
  );
}
