import type { UserRole } from "@/lib/accounts/users";

// What each role may do in the dashboard. Checked on the server by every page, action and image
// request (lib/dashboard/action-client.ts, lib/auth/session.ts); the navigation only mirrors it.
export const CAPABILITIES = {
  /** Read pets, their images and details. */
  "pets:read": ["staff", "support", "owner"],
  /** Create, edit, delete pets; capture sessions and jobs (registration, verification, identification). */
  "pets:write": ["staff", "owner"],
  /** The jobs explorer with failure reasons. */
  "jobs:read": ["support", "owner"],
  /** Usage and score charts. */
  "usage:read": ["manager", "owner"],
  /** API keys, team, plan, search pools. */
  "account:manage": ["owner"],
  "audit:read": ["owner", "admin"],
  /** One's own sign-in: the password. */
  "profile:manage": ["staff", "support", "manager", "owner", "admin"],
  /** Every account: list, search, create, plan, users, suspend, reinstate. */
  "accounts:operate": ["admin"],
} as const satisfies Record<string, readonly UserRole[]>;

export type Capability = keyof typeof CAPABILITIES;

export function can(role: UserRole, capability: Capability): boolean {
  return (CAPABILITIES[capability] as readonly UserRole[]).includes(role);
}

/** Where each role lands after signing in. */
export function homePath(role: UserRole): string {
  return { staff: "/dashboard/pets", support: "/dashboard/jobs", manager: "/dashboard/usage", owner: "/dashboard/settings", admin: "/dashboard/accounts" }[role];
}
