"""No-secret canary containers: image, engine settings and cleanup for real-read probes."""
