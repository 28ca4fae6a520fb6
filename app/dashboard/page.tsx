import { redirect } from "next/navigation";
import { homePath } from "@/lib/auth/roles";
import { requirePageUser } from "@/lib/auth/session";

export default async function DashboardHome() {
  const user = await requirePageUser();
  redirect(homePath(user.role));
}
