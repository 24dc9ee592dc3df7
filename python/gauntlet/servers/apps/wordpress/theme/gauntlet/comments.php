<section class="comments">
<h3><?php comments_number(); ?></h3>
<ol><?php wp_list_comments(['style' => 'ol']); ?></ol>
<?php comment_form(); ?>
</section>
