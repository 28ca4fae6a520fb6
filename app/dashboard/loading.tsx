import { Skeleton } from "@/components/dashboard/ui";

export default function Loading() {
  return <Skeleton rows={8} />;
}
