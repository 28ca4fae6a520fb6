import { Card, PageHeader } from "@/components/dashboard/ui";
import { ChangePasswordForm } from "@/components/profile/change-password-form";
import { requirePageUser } from "@/lib/auth/session";

export const metadata = { title: "Your account · Rhinarium" };

export default async function ProfilePage() {
  const user = await requirePageUser("profile:manage");
  return (
    <div className="space-y-4">
      <PageHeader title="Your account" />
      <Card title="Sign-in">
        <dl className="grid grid-cols-[6rem_1fr] gap-y-1 text-sm">
          <dt className="text-slate-500">E-mail</dt>
          <dd className="break-all">{user.email}</dd>
          <dt className="text-slate-500">Role</dt>
          <dd>{user.role}</dd>
        </dl>
      </Card>
      <Card title="Change password">
        <ChangePasswordForm />
      </Card>
    </div>
  );
}
