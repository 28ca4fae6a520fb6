"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

/** The dashboard's navigation: the current section is marked (aria-current="page") and highlighted. */
export function NavLinks({ items }: { items: { href: string; label: string }[] }) {
  const pathname = usePathname();
  return (
    <>
      {items.map((item) => {
        const current = pathname === item.href || pathname.startsWith(`${item.href}/`);
        return (
          <Link
            key={item.href}
            href={item.href}
            aria-current={current ? "page" : undefined}
            className={`rounded px-2 py-1 text-sm focus-visible:outline focus-visible:outline-2 focus-visible:outline-teal-700 ${
              current ? "bg-teal-50 font-semibold text-teal-900" : "text-slate-700 hover:bg-slate-100"
            }`}
          >
            {item.label}
          </Link>
        );
      })}
    </>
  );
}
