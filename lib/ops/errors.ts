/** A command line or command the operator got wrong: exit code 2 and the message, never a stack. */
export class OpsUsageError extends Error {}
