import { redirect } from "next/navigation";
import { NewPetForm } from "@/components/pets/new-pet-form";
import { PetsTable } from "@/components/pets/pets-table";
import { PageHeader } from "@/components/dashboard/ui";
import { can } from "@/lib/auth/roles";
import { requireAccountUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { getPetFields } from "@/lib/dashboard/account";
import { petListQuerySchema } from "@/lib/dashboard/pet-list-query";
import { listPetsPage } from "@/lib/dashboard/pets";

export const metadata = { title: "Pets · Rhinarium" };

export default async function PetsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const user = await requireAccountUser("pets:read");
  const raw = await searchParams;
  const query = petListQuerySchema.parse(raw);
  const db = await getDb();
  const [page, petFields] = await Promise.all([listPetsPage(db, user.accountId, query), getPetFields(db, user.accountId)]);
  // A page past the end (an old link, ?page=99) goes to the last page instead of an empty one.
  const lastPage = Math.max(1, Math.ceil(page.total / query.size));
  if (query.page > lastPage) {
    const params = new URLSearchParams(Object.entries(raw).filter((e): e is [string, string] => typeof e[1] === "string"));
    params.set("page", String(lastPage));
    redirect(`/dashboard/pets?${params.toString()}`);
  }
  return (
    <div className="space-y-6">
      <PageHeader title="Pets" />
      {can(user.role, "pets:write") && <NewPetForm petFields={petFields} defaultSpecies={raw.new === "CAT" ? "CAT" : "DOG"} />}
      <PetsTable rows={page.rows} total={page.total} query={query} />
    </div>
  );
}
