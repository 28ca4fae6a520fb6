import { redirect } from "next/navigation";
import { Suspense } from "react";
import { SignInForm } from "@/components/auth/sign-in-form";
import { getSessionUser } from "@/lib/auth/session";
import { isFirstRun } from "@/lib/dashboard/first-run";

export const metadata = { title: "Sign in · Rhinarium" };

export default async function SignInPage() {
  if (await getSessionUser()) redirect("/dashboard");
  // A new installation has no one to sign in: its first run creates the operator and the first clinic.
  if (await isFirstRun()) redirect("/setup");
  return (
    <main className="mx-auto flex min-h-screen max-w-sm flex-col justify-center px-4">
      <h1 className="mb-1 text-2xl font-semibold text-teal-800">Rhinarium</h1>
      <p className="mb-6 text-sm text-slate-600">Sign in to the staff dashboard.</p>
      <Suspense>
        <SignInForm />
      </Suspense>
      <p className="mt-4 text-xs text-slate-500" data-testid="sign-in-help">
        No account yet? Your clinic&apos;s owner invites staff under Settings → Team; the invitation comes by e-mail. Owners and operators are created by the operator
        (<code>npm run ops -- user:create</code>).
      </p>
    </main>
  );
}
