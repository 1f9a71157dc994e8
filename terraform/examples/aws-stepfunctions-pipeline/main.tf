# taskgate next to Step Functions pipelines that already run: a sample state machine stands for
# one (published as a version behind the alias "live", the way pipelines are usually released),
# and var.pipelines adds the real ones.

# The sample pipeline. Its states (Choice, Wait, Pass) call no AWS service, so its role needs no
# permission beyond being assumable by Step Functions.
data "aws_iam_policy_document" "sample_trust" {
  statement {
    effect  = "Allow"
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["states.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "sample" {
  name               = "${var.name}-sample-order-review"
  assume_role_policy = data.aws_iam_policy_document.sample_trust.json
}

resource "aws_sfn_state_machine" "sample" {
  name       = "${var.name}-sample-order-review"
  role_arn   = aws_iam_role.sample.arn
  type       = "STANDARD"
  definition = file("${path.module}/order-review.asl.json")
  publish    = true
}

resource "aws_sfn_alias" "live" {
  name        = "live"
  description = "The version taskgate serves"

  routing_configuration {
    state_machine_version_arn = aws_sfn_state_machine.sample.state_machine_version_arn
    weight                    = 100
  }
}

locals {
  mapping = templatefile("${path.module}/tools.yaml.tftpl", {
    region     = var.region
    sample_arn = aws_sfn_alias.live.arn
    pipelines  = var.pipelines
  })
}

module "taskgate" {
  source = "../../modules/taskgate-aws"

  name                  = var.name
  image                 = var.image
  mapping_yaml          = local.mapping
  token_keys_secret_arn = var.token_keys_secret_arn
  api_key_secret_arns   = { TASKGATE_KEY_CLIENTS = var.client_api_key_secret_arn }

  # Exactly the targets of the mapping: the task role may start these and nothing else.
  state_machine_arns = concat([aws_sfn_alias.live.arn], [for p in var.pipelines : p.state_machine_arn])

  vpc_id                   = var.vpc_id
  load_balancer_subnet_ids = var.load_balancer_subnet_ids
  service_subnet_ids       = var.service_subnet_ids
  internal                 = var.internal
  allowed_cidr_blocks      = var.allowed_cidr_blocks
  certificate_arn          = var.certificate_arn
  domain_name              = var.domain_name
  route53_zone_id          = var.route53_zone_id
}
