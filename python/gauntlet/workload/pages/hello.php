<?php echo "Hello, World!";
