{
  "targets": [
    {
      "target_name": "kernels",
      "sources": ["kernels.c"],
      "cflags": ["-O3", "-std=c11", "-Wall", "-Wextra"]
    }
  ]
}
