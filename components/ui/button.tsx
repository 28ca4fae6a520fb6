"use client";

import { Slot } from "@radix-ui/react-slot";
import { forwardRef, type ButtonHTMLAttributes } from "react";
import { buttonClass, dangerButtonClass, secondaryButtonClass } from "@/components/dashboard/ui";

// The dashboard's one button (shadcn/ui's shape on Radix Slot): `asChild` styles a Link as a button.

const VARIANTS = { primary: buttonClass, secondary: secondaryButtonClass, danger: dangerButtonClass } as const;

export type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & { variant?: keyof typeof VARIANTS; asChild?: boolean };

export const Button = forwardRef<HTMLButtonElement, ButtonProps>(function Button({ variant = "primary", asChild = false, className = "", type, ...props }, ref) {
  const Component = asChild ? Slot : "button";
  return <Component ref={ref} className={`${VARIANTS[variant]} ${className}`} {...(asChild ? {} : { type: type ?? "button" })} {...props} />;
});
