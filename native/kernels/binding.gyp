{
  "targets": [
    {
      "target_name": "kernels",
      "sources": ["kernels.c"],
      "cflags": ["-O3", "-std=c11", "-ffp-contract=off", "-Wall", "-Wextra"]
    }
  ]
}
