import Link from "next/link";
import { EmptyState } from "@/components/dashboard/ui";

export default function NotFound() {
  return (
    <div data-testid="not-found">
      <EmptyState title="Not found">
        This page does not exist, or it is not part of your account. <Link href="/dashboard" className="text-teal-800 underline">Back to the dashboard</Link>
      </EmptyState>
    </div>
  );
}
