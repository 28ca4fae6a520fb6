import { notFound } from "next/navigation";
import { CaptureFlow } from "@/components/capture/capture-flow";
import { PageHeader } from "@/components/dashboard/ui";
import { requireAccountUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { DomainError } from "@/lib/domain-errors";
import { getPetOrThrow } from "@/lib/pets/pets";

const PURPOSES = {
  register: { purpose: "PET_PROFILE_REGISTRATION", title: "Register nose images", needsPet: true },
  verify: { purpose: "PET_VERIFICATION", title: "Verify a pet", needsPet: true },
  identify: { purpose: "PET_IDENTIFICATION", title: "Identify a pet", needsPet: false },
} as const;

export const metadata = { title: "Capture · Rhinarium" };

export default async function CapturePage(props: { params: Promise<{ purpose: string }>; searchParams: Promise<{ petId?: string }> }) {
  const user = await requireAccountUser("pets:write");
  const { purpose } = await props.params;
  const flow = PURPOSES[purpose as keyof typeof PURPOSES];
  if (!flow) notFound();
  const { petId } = await props.searchParams;
  let pet = null;
  if (flow.needsPet) {
    if (!petId) notFound();
    pet = await getPetOrThrow(await getDb(), user.accountId, petId).catch((error) => {
      if (error instanceof DomainError && error.failure === "PetNotFound") notFound();
      throw error;
    });
  }
  return (
    <div>
      <PageHeader title={flow.title} />
      <CaptureFlow purpose={flow.purpose} pet={pet ? { id: pet.id, species: pet.species, breed: pet.breed, metadata: pet.metadata, hasFingerprint: pet.hasFingerprint } : null} />
    </div>
  );
}
