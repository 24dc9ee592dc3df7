<?php get_header(); ?>
<main class="content">
<?php if (have_posts()) : while (have_posts()) : the_post(); ?>
<article id="post-<?php the_ID(); ?>" <?php post_class(); ?>>
<?php if (is_singular()) : ?>
<h2><?php the_title(); ?></h2>
<?php the_post_thumbnail('medium'); ?>
<?php the_content(); ?>
<p><?php the_category(', '); ?> · <?php the_time(get_option('date_format')); ?></p>
<?php comments_template(); ?>
<?php else : ?>
<h2><a href="<?php the_permalink(); ?>"><?php the_title(); ?></a></h2>
<?php the_post_thumbnail('thumbnail'); ?>
<?php the_excerpt(); ?>
<p><?php the_category(', '); ?> · <?php comments_number(); ?></p>
<?php endif; ?>
</article>
<?php endwhile; the_posts_navigation(); else : ?>
<p>Nothing found.</p>
<?php endif; ?>
</main>
<?php get_sidebar(); ?>
<?php get_footer(); ?>
