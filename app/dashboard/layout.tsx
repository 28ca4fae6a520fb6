import Link from "next/link";
import type { ReactNode } from "react";
import { NavLinks } from "@/components/dashboard/nav-links";
import { SignOutButton } from "@/components/dashboard/sign-out-button";
import { Toaster } from "@/components/ui/toast";
import { can, type Capability } from "@/lib/auth/roles";
import { requirePageUser } from "@/lib/auth/session";

const NAV: { href: string; label: string; capability: Capability }[] = [
  { href: "/dashboard/pets", label: "Pets", capability: "pets:read" },
  { href: "/dashboard/capture/identify", label: "Identify", capability: "pets:write" },
  { href: "/dashboard/jobs", label: "Jobs", capability: "jobs:read" },
  { href: "/dashboard/usage", label: "Usage", capability: "usage:read" },
  { href: "/dashboard/settings", label: "Settings", capability: "account:manage" },
  { href: "/dashboard/webhooks", label: "Webhooks", capability: "account:manage" },
  { href: "/dashboard/accounts", label: "Accounts", capability: "accounts:operate" },
  { href: "/dashboard/audit", label: "Audit log", capability: "audit:read" },
];

export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const user = await requirePageUser();
  return (
    <div className="min-h-screen">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:shadow">
        Skip to content
      </a>
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-3">
          <Link href="/dashboard" className="text-lg font-semibold text-teal-800">
            Rhinarium
          </Link>
          <nav aria-label="Dashboard" className="flex flex-1 flex-wrap gap-1">
            <NavLinks items={NAV.filter((item) => can(user.role, item.capability)).map(({ href, label }) => ({ href, label }))} />
          </nav>
          <div className="flex min-w-0 flex-wrap items-center gap-3 text-sm text-slate-600">
            <Link href="/dashboard/profile" data-testid="signed-in-as" className="break-all hover:underline" title="Your account: change your password">
              {user.email} · {user.role}
            </Link>
            <SignOutButton />
          </div>
        </div>
      </header>
      <main id="main" tabIndex={-1} className="mx-auto max-w-6xl px-4 py-6 focus:outline-none">
        {children}
      </main>
      <Toaster />
    </div>
  );
}
