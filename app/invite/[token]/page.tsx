import { InviteForm } from "@/components/auth/invite-form";
import { Notice } from "@/components/dashboard/ui";
import { INVITATION_INVALID_MESSAGE, invitationForPage } from "@/lib/dashboard/invitation-page";

export const metadata = { title: "Join your team · Rhinarium" };
// Read per request: a link stops working once used, withdrawn or expired (and the page needs its CSP nonce).
export const dynamic = "force-dynamic";

export default async function InvitePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const invitation = await invitationForPage(token);
  return (
    <main className="mx-auto flex min-h-screen max-w-sm flex-col justify-center px-4">
      <h1 className="mb-1 text-2xl font-semibold text-teal-800">Rhinarium</h1>
      {invitation ? (
        <>
          <p className="mb-6 text-sm text-slate-600" data-testid="invitation">
            Join <strong>{invitation.accountName}</strong> as {invitation.role}, signing in as <strong>{invitation.email}</strong>. Choose your
            password.
          </p>
          <InviteForm token={token} email={invitation.email} />
        </>
      ) : (
        <Notice tone="error" testId="invitation-invalid">
          {INVITATION_INVALID_MESSAGE}
        </Notice>
      )}
    </main>
  );
}
