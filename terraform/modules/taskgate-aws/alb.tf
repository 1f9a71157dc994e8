resource "aws_security_group" "load_balancer" {
  name        = "${var.name}-lb"
  description = "taskgate ${var.name} load balancer: HTTPS from the MCP clients"
  vpc_id      = var.vpc_id
  tags        = local.tags
}

locals {
  listener_ports = var.redirect_http ? [443, 80] : [443]
  ingress = { for pair in setproduct(local.listener_ports, var.allowed_cidr_blocks) : "${pair[0]} ${pair[1]}" => {
    port = pair[0]
    cidr = pair[1]
  } }
}

resource "aws_vpc_security_group_ingress_rule" "clients" {
  for_each = local.ingress

  security_group_id = aws_security_group.load_balancer.id
  description       = each.value.port == 443 ? "MCP clients (HTTPS)" : "MCP clients (HTTP, redirected to HTTPS)"
  ip_protocol       = "tcp"
  from_port         = each.value.port
  to_port           = each.value.port
  cidr_ipv4         = strcontains(each.value.cidr, ":") ? null : each.value.cidr
  cidr_ipv6         = strcontains(each.value.cidr, ":") ? each.value.cidr : null
  tags              = local.tags
}

resource "aws_vpc_security_group_egress_rule" "load_balancer_to_tasks" {
  for_each = { mcp = var.container_port, health = var.ops_port }

  security_group_id            = aws_security_group.load_balancer.id
  description                  = each.key == "mcp" ? "taskgate tasks: MCP" : "taskgate tasks: health checks"
  ip_protocol                  = "tcp"
  from_port                    = each.value
  to_port                      = each.value
  referenced_security_group_id = aws_security_group.service.id
  tags                         = local.tags
}

resource "aws_lb" "this" {
  name                       = var.name
  load_balancer_type         = "application"
  internal                   = var.internal
  security_groups            = [aws_security_group.load_balancer.id]
  subnets                    = var.load_balancer_subnet_ids
  idle_timeout               = var.idle_timeout_seconds
  drop_invalid_header_fields = true
  enable_deletion_protection = var.deletion_protection
  tags                       = local.tags

  dynamic "access_logs" {
    for_each = var.access_logs_bucket == null ? [] : [var.access_logs_bucket]
    content {
      bucket  = access_logs.value
      prefix  = var.name
      enabled = true
    }
  }
}

resource "aws_lb_target_group" "this" {
  name                 = var.name
  vpc_id               = var.vpc_id
  target_type          = "ip"
  protocol             = "HTTP"
  port                 = var.container_port
  deregistration_delay = var.deregistration_delay_seconds
  tags                 = local.tags

  health_check {
    path                = var.health_check_path
    protocol            = "HTTP"
    port                = tostring(var.ops_port)
    matcher             = "200"
    interval            = var.health_check_interval_seconds
    timeout             = 5
    healthy_threshold   = 2
    unhealthy_threshold = 3
  }
}

resource "aws_lb_listener" "https" {
  load_balancer_arn = aws_lb.this.arn
  port              = 443
  protocol          = "HTTPS"
  ssl_policy        = var.ssl_policy
  certificate_arn   = var.certificate_arn
  tags              = local.tags

  # Only MCP and its OAuth metadata reach taskgate; everything else (the ops endpoints among
  # them, should a request name them) is answered here.
  default_action {
    type = "fixed-response"
    fixed_response {
      content_type = "text/plain"
      message_body = "Not found: taskgate serves MCP at /mcp"
      status_code  = "404"
    }
  }
}

resource "aws_lb_listener_rule" "mcp" {
  listener_arn = aws_lb_listener.https.arn
  priority     = 10
  tags         = local.tags

  action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.this.arn
  }

  condition {
    path_pattern {
      values = ["/mcp", "/.well-known/*"]
    }
  }
}

resource "aws_lb_listener" "http" {
  count = var.redirect_http ? 1 : 0

  load_balancer_arn = aws_lb.this.arn
  port              = 80
  protocol          = "HTTP"
  tags              = local.tags

  default_action {
    type = "redirect"
    redirect {
      protocol    = "HTTPS"
      port        = "443"
      status_code = "HTTP_301"
    }
  }
}

resource "aws_route53_record" "this" {
  count = var.route53_zone_id != null ? 1 : 0

  zone_id = var.route53_zone_id
  name    = var.domain_name
  type    = "A"

  alias {
    name                   = aws_lb.this.dns_name
    zone_id                = aws_lb.this.zone_id
    evaluate_target_health = true
  }
}
