"use server";

import { revalidatePath } from "next/cache";
import {
  changeRoleAction,
  deactivateKeyAction,
  issueKeyAction,
  reissueKeyAction,
  inviteTeamMemberAction,
  removeTeamMemberAction,
  revokeInvitationAction,
  resetMemberPasswordAction,
  unlockMemberAction,
  selectSearchPoolAction,
  setPetFieldsAction,
} from "@/lib/dashboard/account";
import { runAction } from "@/lib/dashboard/run-action";

async function andRefresh<T extends { ok: boolean }>(result: Promise<T>): Promise<T> {
  const answer = await result;
  if (answer.ok) revalidatePath("/dashboard/settings");
  return answer;
}

export async function issueKey(input: unknown) {
  return andRefresh(runAction(issueKeyAction, input));
}
export async function reissueKey(input: unknown) {
  return andRefresh(runAction(reissueKeyAction, input));
}
export async function resetMemberPassword(input: unknown) {
  return andRefresh(runAction(resetMemberPasswordAction, input));
}
export async function unlockMember(input: unknown) {
  return andRefresh(runAction(unlockMemberAction, input));
}
export async function deactivateKey(input: unknown) {
  return andRefresh(runAction(deactivateKeyAction, input));
}
export async function inviteTeamMember(input: unknown) {
  return andRefresh(runAction(inviteTeamMemberAction, input));
}
export async function revokeInvitation(input: unknown) {
  return andRefresh(runAction(revokeInvitationAction, input));
}
export async function changeRole(input: unknown) {
  return andRefresh(runAction(changeRoleAction, input));
}
export async function removeTeamMember(input: unknown) {
  return andRefresh(runAction(removeTeamMemberAction, input));
}
export async function selectSearchPool(input: unknown) {
  return andRefresh(runAction(selectSearchPoolAction, input));
}
export async function setPetFields(input: unknown) {
  return andRefresh(runAction(setPetFieldsAction, input));
}
