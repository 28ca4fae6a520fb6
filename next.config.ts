import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native image decoding (sharp) and worker threads must stay outside the bundle.
  serverExternalPackages: ["sharp"],
  poweredByHeader: false,
};

export default nextConfig;
