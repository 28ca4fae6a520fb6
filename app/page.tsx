export default function HomePage() {
  return (
    <main className="mx-auto max-w-2xl p-8">
      <h1 className="text-2xl font-semibold">Rhinarium</h1>
      <p className="mt-2 text-slate-600">
        Pet nose-print registry: register a pet once from a few photos of its nose, then verify or identify it.
      </p>
    </main>
  );
}
