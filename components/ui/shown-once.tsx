"use client";

import type { ReactNode } from "react";
import { Notice } from "@/components/dashboard/ui";
import { Button } from "./button";
import { toast } from "./toast";

/**
 * A secret the server answers once (an API key, a webhook signing secret): the sentence saying so, the value,
 * and a Copy button. Nothing keeps it: a reload shows it no more.
 */
export function ShownOnce(props: { value: string; what: "key" | "secret"; testId?: string; valueTestId?: string; copyTestId?: string; children: ReactNode }) {
  async function copy() {
    try {
      await navigator.clipboard.writeText(props.value);
      toast.success(props.what === "key" ? "Key copied." : "Secret copied.");
    } catch {
      toast.error(`The browser refused the clipboard: select the ${props.what} and copy it.`);
    }
  }
  return (
    <Notice tone="success" testId={props.testId}>
      {props.children}
      <div className="mt-1 flex flex-wrap items-start gap-2">
        <code className="block min-w-0 flex-1 break-all rounded bg-white p-2 font-mono" data-testid={props.valueTestId}>
          {props.value}
        </code>
        <Button variant="secondary" onClick={() => void copy()} data-testid={props.copyTestId}>
          Copy
        </Button>
      </div>
    </Notice>
  );
}
