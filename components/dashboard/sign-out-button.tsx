"use client";

import { signOut } from "next-auth/react";
import { secondaryButtonClass } from "./ui";

export function SignOutButton() {
  return (
    <button type="button" className={secondaryButtonClass} onClick={() => void signOut({ callbackUrl: "/sign-in" })}>
      Sign out
    </button>
  );
}
