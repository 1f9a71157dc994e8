terraform {
  # No provider: the policy is computed from the inputs alone, so `tofu init` needs no download.
  required_version = ">= 1.6.0"
}
