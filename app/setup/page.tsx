import { redirect } from "next/navigation";
import { SetupForm } from "@/components/auth/setup-form";
import { DEFAULT_PLANS } from "@/lib/accounts/plans";
import { isFirstRun } from "@/lib/dashboard/first-run";

export const metadata = { title: "Set up · Rhinarium" };
// Whether anyone exists is read per request (and the page needs its per-request CSP nonce).
export const dynamic = "force-dynamic";

export default async function SetupPage() {
  if (!(await isFirstRun())) redirect("/sign-in");
  return (
    <main className="mx-auto flex min-h-screen max-w-lg flex-col justify-center px-4 py-8">
      <h1 className="mb-1 text-2xl font-semibold text-teal-800">Set up Rhinarium</h1>
      <p className="mb-6 text-sm text-slate-600">
        No one can sign in yet. Create the operator, who manages every clinic account, and the first clinic with its owner. This page
        closes for good once it is done.
      </p>
      <SetupForm plans={DEFAULT_PLANS.map((p) => ({ name: p.name, petLimit: p.petLimit, identification: p.identification }))} />
    </main>
  );
}
