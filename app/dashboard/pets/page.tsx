import { NewPetForm } from "@/components/pets/new-pet-form";
import { PetsTable } from "@/components/pets/pets-table";
import { PageHeader } from "@/components/dashboard/ui";
import { can } from "@/lib/auth/roles";
import { requireAccountUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { petListQuerySchema } from "@/lib/dashboard/pet-list-query";
import { listPetsPage } from "@/lib/dashboard/pets";

export const metadata = { title: "Pets · Rhinarium" };

export default async function PetsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const user = await requireAccountUser("pets:read");
  const query = petListQuerySchema.parse(await searchParams);
  const page = await listPetsPage(await getDb(), user.accountId, query);
  return (
    <div className="space-y-6">
      <PageHeader title="Pets" />
      {can(user.role, "pets:write") && <NewPetForm />}
      <PetsTable rows={page.rows} total={page.total} query={query} />
    </div>
  );
}
