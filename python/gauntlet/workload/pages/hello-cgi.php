#!/usr/bin/php-cgi -dcgi.force_redirect=0
<?php echo "Hello, World!";
