#!/bin/sh
# Stand-in for the native schema engine: `prisma generate` needs the variable set but never runs it.
exit 1
