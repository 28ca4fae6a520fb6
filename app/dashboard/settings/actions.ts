"use server";

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
import { runActionAndRefresh } from "@/lib/dashboard/run-action";

const PAGE = "/dashboard/settings";

export async function issueKey(input: unknown) {
  return runActionAndRefresh(issueKeyAction, input, PAGE);
}
export async function reissueKey(input: unknown) {
  return runActionAndRefresh(reissueKeyAction, input, PAGE);
}
export async function resetMemberPassword(input: unknown) {
  return runActionAndRefresh(resetMemberPasswordAction, input, PAGE);
}
export async function unlockMember(input: unknown) {
  return runActionAndRefresh(unlockMemberAction, input, PAGE);
}
export async function deactivateKey(input: unknown) {
  return runActionAndRefresh(deactivateKeyAction, input, PAGE);
}
export async function inviteTeamMember(input: unknown) {
  return runActionAndRefresh(inviteTeamMemberAction, input, PAGE);
}
export async function revokeInvitation(input: unknown) {
  return runActionAndRefresh(revokeInvitationAction, input, PAGE);
}
export async function changeRole(input: unknown) {
  return runActionAndRefresh(changeRoleAction, input, PAGE);
}
export async function removeTeamMember(input: unknown) {
  return runActionAndRefresh(removeTeamMemberAction, input, PAGE);
}
export async function selectSearchPool(input: unknown) {
  return runActionAndRefresh(selectSearchPoolAction, input, PAGE);
}
export async function setPetFields(input: unknown) {
  return runActionAndRefresh(setPetFieldsAction, input, PAGE);
}
