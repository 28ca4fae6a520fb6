import Link from "next/link";
import { notFound } from "next/navigation";
import { Card, EmptyState, OutcomeBadge, PageHeader, QualityBadge } from "@/components/dashboard/ui";
import { Button } from "@/components/ui/button";
import { DeletePetButton } from "@/components/pets/delete-pet-button";
import { PetEditor } from "@/components/pets/pet-editor";
import { can } from "@/lib/auth/roles";
import { requireAccountUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { DomainError } from "@/lib/domain-errors";
import { getPetFields } from "@/lib/dashboard/account";
import { petLabel, petName } from "@/lib/dashboard/pet-fields";
import { getPetDetail } from "@/lib/dashboard/pets";

export const metadata = { title: "Pet · Rhinarium" };

export default async function PetPage({ params }: { params: Promise<{ petId: string }> }) {
  const user = await requireAccountUser("pets:read");
  const { petId } = await params;
  // Scoped by the signed-in user's account: another account's pet is "not found", like a missing one.
  const detail = await getPetDetail(await getDb(), user.accountId, petId).catch((error) => {
    if (error instanceof DomainError && error.failure === "PetNotFound") notFound();
    throw error;
  });
  const { pet, fingerprints, appearances, jobs, noseMatches } = detail;
  const writable = can(user.role, "pets:write");
  const petFields = await getPetFields(await getDb(), user.accountId);
  return (
    <div className="space-y-6">
      <PageHeader title={petLabel(pet)}>
        {writable && (
          <>
            <Button variant="secondary" asChild>
              <Link href={`/dashboard/capture/register?petId=${pet.id}`}>Register nose images</Link>
            </Button>
            {pet.hasFingerprint ? (
              <Button variant="secondary" asChild>
                <Link href={`/dashboard/capture/verify?petId=${pet.id}`}>Verify</Link>
              </Button>
            ) : (
              <Button variant="secondary" disabled title="Register nose images first">
                Verify
              </Button>
            )}
            <DeletePetButton petId={pet.id} name={petName(pet.metadata)} />
          </>
        )}
      </PageHeader>
      <Card title="Details">
        <dl className="grid grid-cols-[8rem_1fr] gap-y-1 text-sm">
          <dt className="text-slate-500">Id</dt>
          <dd className="break-all font-mono" data-testid="pet-id">
            {pet.id}
          </dd>
          <dt className="text-slate-500">Species</dt>
          <dd>{pet.species === "DOG" ? "Dog" : "Cat"}{pet.breed ? ` · ${pet.breed}` : ""}</dd>
          <dt className="text-slate-500">Created</dt>
          <dd>{new Date(pet.createdAt).toLocaleString()}</dd>
          <dt className="text-slate-500">Fingerprint</dt>
          <dd data-testid="pet-has-fingerprint">{pet.hasFingerprint ? `${fingerprints.length} nose images enrolled` : "none yet"}</dd>
        </dl>
      </Card>
      <Card title="Enrolled nose images">
        {fingerprints.length === 0 ? (
          <EmptyState title="No nose images enrolled">Register nose images to verify and identify this pet.</EmptyState>
        ) : (
          <ul className="grid grid-cols-2 gap-3 sm:grid-cols-3 md:grid-cols-5" data-testid="enrolled-images">
            {fingerprints.map((f) => (
              <li key={f.id} className="space-y-1">
                {/* eslint-disable-next-line @next/next/no-img-element -- served by our own authenticated route */}
                <img src={`/dashboard/images/fingerprint/${f.id}`} alt="Enrolled nose image" className="aspect-square w-full rounded object-cover" loading="lazy" />
                <QualityBadge usable={f.usable} score={f.score} reasons={f.reasons} />
              </li>
            ))}
          </ul>
        )}
        {appearances.length > 0 && (
          <div className="mt-4 flex flex-wrap gap-3">
            {appearances.map((a) => (
              // eslint-disable-next-line @next/next/no-img-element
              <img key={a.id} src={`/dashboard/images/appearance/${a.id}`} alt="Appearance photo" className="h-24 rounded object-cover" loading="lazy" />
            ))}
          </div>
        )}
      </Card>
      <PetEditor pet={{ id: pet.id, breed: pet.breed, metadata: pet.metadata }} petFields={petFields} readOnly={!writable} />
      {noseMatches.length > 0 && (
        <Card title="Matching noses">
          <div data-testid="pet-nose-matches" className="space-y-1 text-sm text-amber-900">
            <p>Registrations found these noses match {noseMatches.length === 1 ? "another registered pet" : "other registered pets"} of the account: the same animal registered twice?</p>
            <ul className="list-disc pl-5">
              {noseMatches.map((m) => (
                <li key={m.petId}>
                  {m.label ? <Link href={`/dashboard/pets/${m.petId}`} className="underline">{m.label}</Link> : <span className="font-mono">{m.petId} (deleted)</span>} · score {m.score.toFixed(1)} ·{" "}
                  <Link href={`/dashboard/jobs/${m.jobId}`} className="underline">registration</Link>
                </li>
              ))}
            </ul>
          </div>
        </Card>
      )}
      <Card title="Recent jobs">
        {jobs.length === 0 ? (
          <p className="text-sm text-slate-600">No jobs yet.</p>
        ) : (
          <ul className="space-y-1 text-sm">
            {jobs.map((j) => (
              <li key={j.id} className="flex flex-wrap items-center gap-2">
                <OutcomeBadge outcome={j.outcome} />
                <Link href={`/dashboard/jobs/${j.id}`} className="text-teal-800 underline">
                  {{ FINGERPRINT_ADDITION: "Registration", VERIFICATION: "Verification", IDENTIFICATION: "Identification" }[j.kind]}
                </Link>
                · {new Date(j.createdAt).toLocaleString()}
              </li>
            ))}
          </ul>
        )}
      </Card>
    </div>
  );
}
