<footer class="footer"><p><?php bloginfo('name'); ?></p></footer>
<?php wp_footer(); ?>
</body>
</html>
