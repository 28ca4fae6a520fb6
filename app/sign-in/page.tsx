import { redirect } from "next/navigation";
import { Suspense } from "react";
import { SignInForm } from "@/components/auth/sign-in-form";
import { getSessionUser } from "@/lib/auth/session";

export const metadata = { title: "Sign in · Rhinarium" };

export default async function SignInPage() {
  if (await getSessionUser()) redirect("/dashboard");
  return (
    <main className="mx-auto flex min-h-screen max-w-sm flex-col justify-center px-4">
      <h1 className="mb-1 text-2xl font-semibold text-teal-800">Rhinarium</h1>
      <p className="mb-6 text-sm text-slate-600">Sign in to the staff dashboard.</p>
      <Suspense>
        <SignInForm />
      </Suspense>
    </main>
  );
}
