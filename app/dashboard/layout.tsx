import Link from "next/link";
import type { ReactNode } from "react";
import { SignOutButton } from "@/components/dashboard/sign-out-button";
import { can, type Capability } from "@/lib/auth/roles";
import { requirePageUser } from "@/lib/auth/session";

const NAV: { href: string; label: string; capability: Capability }[] = [
  { href: "/dashboard/pets", label: "Pets", capability: "pets:read" },
  { href: "/dashboard/capture/identify", label: "Identify", capability: "pets:write" },
  { href: "/dashboard/jobs", label: "Jobs", capability: "jobs:read" },
  { href: "/dashboard/usage", label: "Usage", capability: "usage:read" },
  { href: "/dashboard/settings", label: "Settings", capability: "account:manage" },
  { href: "/dashboard/accounts", label: "Accounts", capability: "accounts:operate" },
  { href: "/dashboard/audit", label: "Audit log", capability: "audit:read" },
];

export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const user = await requirePageUser();
  return (
    <div className="min-h-screen">
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-3">
          <Link href="/dashboard" className="text-lg font-semibold text-teal-800">
            Rhinarium
          </Link>
          <nav aria-label="Dashboard" className="flex flex-1 flex-wrap gap-1">
            {NAV.filter((item) => can(user.role, item.capability)).map((item) => (
              <Link key={item.href} href={item.href} className="rounded px-2 py-1 text-sm text-slate-700 hover:bg-slate-100 focus-visible:outline focus-visible:outline-2 focus-visible:outline-teal-700">
                {item.label}
              </Link>
            ))}
          </nav>
          <div className="flex items-center gap-3 text-sm text-slate-600">
            <span data-testid="signed-in-as">
              {user.email} · {user.role}
            </span>
            <SignOutButton />
          </div>
        </div>
      </header>
      <main className="mx-auto max-w-6xl px-4 py-6">{children}</main>
    </div>
  );
}
