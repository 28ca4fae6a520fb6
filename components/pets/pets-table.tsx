"use client";

import { flexRender, getCoreRowModel, useReactTable, type ColumnDef, type SortingState } from "@tanstack/react-table";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { useState, useTransition, type FormEvent } from "react";
import { EmptyState, inputClass, secondaryButtonClass, TableScroll } from "@/components/dashboard/ui";
import { PAGE_SIZES, PET_SORTS, type PetListQuery, type PetListRow } from "@/lib/dashboard/pet-list-query";
import { petName } from "@/lib/dashboard/pet-fields";

const columns: ColumnDef<PetListRow>[] = [
  {
    accessorKey: "metadata",
    header: "Pet",
    enableSorting: false,
    cell: ({ row }) => {
      const name = petName(row.original.metadata);
      return (
        <div className="min-w-0">
          <Link href={`/dashboard/pets/${row.original.id}`} className="font-medium text-teal-800 underline" data-testid="pet-link">
            {name ?? "(no name)"}
          </Link>
          <div className="break-all font-mono text-xs text-slate-600">{row.original.id}</div>
        </div>
      );
    },
  },
  { accessorKey: "species", header: "Species" },
  { accessorKey: "breed", header: "Breed", cell: ({ getValue }) => (getValue() as string | null) ?? "—" },
  {
    accessorKey: "enrolledImages",
    header: "Nose images",
    enableSorting: false,
    cell: ({ getValue }) => ((getValue() as number) > 0 ? `${getValue()} enrolled` : <span className="text-slate-500">none</span>),
  },
  { accessorKey: "createdAt", header: "Created", cell: ({ getValue }) => new Date(getValue() as string).toLocaleString() },
];

/** Server-side pagination, sorting and filtering: the table's state lives in the URL, the server pages. */
export function PetsTable({ rows, total, query }: { rows: PetListRow[]; total: number; query: PetListQuery }) {
  const router = useRouter();
  const pathname = usePathname();
  const [pending, startTransition] = useTransition();
  const [search, setSearch] = useState(query.q);
  const pageCount = Math.max(1, Math.ceil(total / query.size));
  const unfiltered = !query.q && query.species === "all" && query.fingerprint === "all";

  function navigate(change: Partial<PetListQuery>) {
    const next = { ...query, ...change };
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(next)) if (value !== "" && value !== "all") params.set(key, String(value));
    startTransition(() => router.push(`${pathname}?${params.toString()}`));
  }

  const sorting: SortingState = [{ id: query.sort, desc: query.dir === "desc" }];
  const table = useReactTable({
    data: rows,
    columns,
    getCoreRowModel: getCoreRowModel(),
    manualPagination: true,
    manualSorting: true,
    manualFiltering: true,
    pageCount,
    state: { sorting, pagination: { pageIndex: query.page - 1, pageSize: query.size } },
    onSortingChange: (updater) => {
      const next = typeof updater === "function" ? updater(sorting) : updater;
      // The server always sorts by something: a third click (TanStack's "unsorted") starts again at ascending.
      const first = next[0] ?? { id: sorting[0].id, desc: false };
      if (first && (PET_SORTS as readonly string[]).includes(first.id)) navigate({ sort: first.id as PetListQuery["sort"], dir: first.desc ? "desc" : "asc", page: 1 });
    },
  });

  function submitSearch(event: FormEvent) {
    event.preventDefault();
    navigate({ q: search, page: 1 });
  }

  return (
    <div className="space-y-3">
      <form onSubmit={submitSearch} className="flex flex-wrap items-end gap-3" role="search">
        <div className="min-w-48 flex-1">
          <label htmlFor="pet-search" className="mb-1 block text-sm font-medium">
            Search name, id, breed or metadata
          </label>
          <input id="pet-search" className={inputClass} value={search} onChange={(e) => setSearch(e.target.value)} placeholder="e.g. Beagle or Rex" />
        </div>
        <div>
          <label htmlFor="species-filter" className="mb-1 block text-sm font-medium">
            Species
          </label>
          <select id="species-filter" className={inputClass} value={query.species} onChange={(e) => navigate({ species: e.target.value as PetListQuery["species"], page: 1 })}>
            <option value="all">All</option>
            <option value="DOG">Dogs</option>
            <option value="CAT">Cats</option>
          </select>
        </div>
        <div>
          <label htmlFor="fingerprint-filter" className="mb-1 block text-sm font-medium">
            Has fingerprint
          </label>
          <select
            id="fingerprint-filter"
            className={inputClass}
            value={query.fingerprint}
            onChange={(e) => navigate({ fingerprint: e.target.value as PetListQuery["fingerprint"], page: 1 })}
          >
            <option value="all">Any</option>
            <option value="yes">Yes</option>
            <option value="no">No</option>
          </select>
        </div>
        <button type="submit" className={secondaryButtonClass}>
          Search
        </button>
      </form>
      {rows.length === 0 ? (
        <EmptyState title={unfiltered ? "No pets yet" : "No pet matches"}>
          {unfiltered ? "Create a pet above, then register its nose images." : "Change the search or the filters."}
        </EmptyState>
      ) : (
        <TableScroll label="Pets" className={`rounded-lg border border-slate-200 bg-white ${pending ? "opacity-60" : ""}`}>
          <table className="w-full text-left text-sm" data-testid="pets-table" aria-busy={pending}>
            <thead className="bg-slate-100">
              {table.getHeaderGroups().map((group) => (
                <tr key={group.id}>
                  {group.headers.map((header) => {
                    const sorted = header.column.getIsSorted();
                    return (
                      <th key={header.id} className="px-3 py-2 font-medium" aria-sort={sorted ? (sorted === "asc" ? "ascending" : "descending") : undefined}>
                        {header.column.getCanSort() ? (
                          <button type="button" className="flex items-center gap-1 hover:underline" onClick={header.column.getToggleSortingHandler()}>
                            {flexRender(header.column.columnDef.header, header.getContext())}
                            <span aria-hidden>{sorted === "asc" ? "▲" : sorted === "desc" ? "▼" : "↕"}</span>
                          </button>
                        ) : (
                          flexRender(header.column.columnDef.header, header.getContext())
                        )}
                      </th>
                    );
                  })}
                </tr>
              ))}
            </thead>
            <tbody>
              {table.getRowModel().rows.map((row) => (
                <tr key={row.id} className="border-t border-slate-100">
                  {row.getVisibleCells().map((cell) => (
                    <td key={cell.id} className="px-3 py-2 align-top">
                      {flexRender(cell.column.columnDef.cell, cell.getContext())}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <div className="flex flex-wrap items-center justify-between gap-3 text-sm">
        <span>
          {total} pet{total === 1 ? "" : "s"} · page {query.page} of {pageCount}
        </span>
        <div className="flex items-center gap-2">
          <label htmlFor="page-size">Per page</label>
          <select id="page-size" className="rounded border border-slate-300 px-2 py-1" value={query.size} onChange={(e) => navigate({ size: Number(e.target.value), page: 1 })}>
            {PAGE_SIZES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
          <button type="button" className={secondaryButtonClass} disabled={query.page <= 1} onClick={() => navigate({ page: query.page - 1 })}>
            Previous
          </button>
          <button type="button" className={secondaryButtonClass} disabled={query.page >= pageCount} onClick={() => navigate({ page: query.page + 1 })}>
            Next
          </button>
        </div>
      </div>
    </div>
  );
}
